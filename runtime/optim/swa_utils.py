"""`G.optim.swa_utils`: stochastic weight averaging and exponential moving averages of a model (PyTorch's).

- `AveragedModel(model, avg_fn=None, multi_avg_fn=None, use_buffers=False)` keeps a deep copy of `model` whose
  parameters (and, with use_buffers, buffers) are the average of the models passed to `update_parameters`:
  the first call copies, later calls apply the averaging function (default: the equal-weight running
  mean, avg + (new - avg) / (n + 1)); without use_buffers, buffers are copied from the model each time.
  `n_averaged` is a buffer, so it is part of the state_dict.
- `get_swa_avg_fn` / `get_ema_avg_fn(decay)` give per-tensor functions `(avg, new, n) -> tensor`;
  `get_swa_multi_avg_fn` / `get_ema_multi_avg_fn(decay)` update lists of tensors in place.
- `update_bn(loader, model)` recomputes BatchNorm running statistics with one pass over `loader`
  (a cumulative average: momentum None while it runs).
- `SWALR(optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos")` anneals each group's lr to swa_lr over
  anneal_epochs steps, then holds it.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

from runtime import opcall
from runtime.autograd.grad_mode import no_grad
from runtime.nn.module import Module
from runtime.nn.normalization import _BatchNorm
from runtime.optim.lr_base import LRScheduler
from runtime.optim.optimizer import Optimizer
from runtime.tensor import Tensor

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[list[Tensor], list[Tensor], Any], None]


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """In place, for each pair: ema = decay * ema + (1 - decay) * new."""
    def ema_update(ema_params: list[Tensor], current_params: list[Tensor], num_averaged: Any) -> None:
        for ema, cur in zip(ema_params, current_params, strict=True):
            if ema.is_floating_point():
                ema.lerp_(cur, 1 - decay)
            else:
                ema.copy_(ema * decay + cur * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """In place, for each pair: avg = avg + (new - avg) / (n + 1)."""
    def swa_update(averaged_params: list[Tensor], current_params: list[Tensor], num_averaged: Any) -> None:
        n = float(num_averaged)
        for avg, cur in zip(averaged_params, current_params, strict=True):
            if avg.is_floating_point():
                avg.lerp_(cur, 1.0 / (n + 1))
            else:
                avg.copy_(avg + (cur - avg) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> AvgFn:
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    def __init__(self, model: Module, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("Only one of avg_fn and multi_avg_fn should be provided")
        G = opcall.api
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", G.tensor(0, dtype=G.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> Iterable[Tensor]:
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model: Module) -> None:
        with no_grad():
            mine = [p.detach() for p in self._tensors(self.module)]
            theirs = [p.detach().to(a.device) for a, p in zip(mine, self._tensors(model), strict=False)]
            n = int(self.n_averaged.item())
            if n == 0:
                for a, p in zip(mine, theirs, strict=False):
                    a.copy_(p)
            elif self.avg_fn is not None:
                for a, p in zip(mine, theirs, strict=False):
                    a.copy_(self.avg_fn(a, p, self.n_averaged.to(a.device)))
            else:
                update = self.multi_avg_fn or get_swa_multi_avg_fn()
                update(mine, theirs, self.n_averaged.to(mine[0].device) if mine else self.n_averaged)
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=False):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged.add_(1)


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every BatchNorm's running mean and variance with one pass of `loader` through `model`."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        swa_lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * n
        if len(swa_lrs) != n:
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: swa_lr has "
                             f"{len(swa_lrs)}, optimizer.param_groups has {n}")
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        return t if self.anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs,
                                                                          strict=True)]


__all__ = ["SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
           "get_swa_multi_avg_fn", "update_bn"]

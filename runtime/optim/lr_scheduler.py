"""`G.optim.lr_scheduler`: learning-rate schedules over an optimizer's param_groups (torch.optim.lr_scheduler).

As in PyTorch, building a scheduler records each group's `initial_lr` and takes step 0 (so the
optimizer's lr is the schedule's first value), `step()` advances `last_epoch` by one and writes the new
lr into every group, and `get_last_lr()` is the list last written.

Note [Chainable schedules]
StepLR, MultiStepLR, ExponentialLR and CosineAnnealingLR compute each lr from the group's current lr
(`lr * gamma` at a step boundary, else unchanged), as PyTorch does, not from `base_lrs` in closed form:
the two differ when something else also changes the lr (a second scheduler, a scheduler resumed from a
state_dict into a fresh optimizer), and programs see PyTorch's values. `step(epoch)` with an explicit
epoch uses the closed form (`_lr`), as PyTorch does.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from runtime.optim.lr_base import LRScheduler, _check_optimizer, _LRScheduler  # noqa: F401  (re-exported)
from runtime.optim.optimizer import Optimizer


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch), one function for every group or one per group."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def _lr(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma ** (epoch // self.step_size)

    def _chained(self, lr: float, base_lr: float, epoch: int) -> float:
        return lr if epoch == 0 or epoch % self.step_size else lr * self.gamma


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones <= epoch, counted with multiplicity)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _lr(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma ** bisect_right(sorted(self.milestones.elements()), epoch)

    def _chained(self, lr: float, base_lr: float, epoch: int) -> float:
        return lr * self.gamma ** self.milestones[epoch] if epoch in self.milestones else lr


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _lr(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma**epoch

    def _chained(self, lr: float, base_lr: float, epoch: int) -> float:
        return lr if epoch == 0 else lr * self.gamma


class LinearLR(LRScheduler):
    """lr = base_lr * factor, the factor going linearly from start_factor to end_factor over total_iters steps."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if not 0 <= end_factor <= 1:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def _lr(self, base_lr: float, epoch: int) -> float:
        done = min(epoch, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * done)

    def _chained(self, lr: float, base_lr: float, epoch: int) -> float:
        if epoch == 0:
            return lr * self.start_factor
        if epoch > self.total_iters:
            return lr
        delta = self.end_factor - self.start_factor
        return lr * (1.0 + delta / (self.total_iters * self.start_factor + (epoch - 1) * delta))


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def _lr(self, base_lr: float, epoch: int) -> float:
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2

    def _chained(self, lr: float, base_lr: float, epoch: int) -> float:
        """The ratio of consecutive closed-form values applied to the current lr; at a period's restart
        point, the increment that climbs back."""
        if epoch == 0:
            return lr
        if self._step_count == 1:
            return self._lr(base_lr, epoch)
        if (epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return lr + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
        ratio = (1 + math.cos(math.pi * epoch / self.T_max)) / (1 + math.cos(math.pi * (epoch - 1) / self.T_max))
        return ratio * (lr - self.eta_min) + self.eta_min


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by `factor` once the metric passed to step() stops improving for `patience` epochs."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | list[float] = 0.0, eps: float = 1e-8) -> None:
        _check_optimizer(optimizer)
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * n
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return a < (best * (1 - self.threshold) if self.threshold_mode == "rel" else best - self.threshold)
        return a > (best * (1 + self.threshold) if self.threshold_mode == "rel" else best + self.threshold)

    def step(self, metrics: Any, epoch: int | None = None) -> None:
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs, strict=True):
                new_lr = max(group["lr"] * self.factor, min_lr)
                if group["lr"] - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class MultiplicativeLR(LRScheduler):
    """lr = lr * lr_lambda(epoch) at every step after the first (one function, or one per group)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        if self.last_epoch > 0:
            return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, groups, strict=True)]
        return [g["lr"] for g in groups]


class ConstantLR(LRScheduler):
    """lr = base_lr * factor until total_iters steps, then base_lr."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def _lr(self, base_lr: float, epoch: int) -> float:
        return base_lr * (self.factor + (epoch >= self.total_iters) * (1 - self.factor))

    def _chained(self, lr: float, base_lr: float, epoch: int) -> float:
        if epoch == 0:
            return lr * self.factor
        if epoch != self.total_iters:
            return lr
        return lr * (1.0 / self.factor)


class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def _lr(self, base_lr: float, epoch: int) -> float:
        return base_lr * (1.0 - min(self.total_iters, epoch) / self.total_iters) ** self.power

    def _chained(self, lr: float, base_lr: float, epoch: int) -> float:
        if epoch == 0 or epoch > self.total_iters:
            return lr
        decay = ((1.0 - epoch / self.total_iters) / (1.0 - (epoch - 1) / self.total_iters)) ** self.power
        return lr * decay


# the schedules that span restarts, cycles or other schedulers (they subclass LRScheduler above)
from runtime.optim.lr_composite import ChainedScheduler, SequentialLR  # noqa: E402
from runtime.optim.lr_cycles import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR  # noqa: E402

__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
           "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR", "MultiplicativeLR", "OneCycleLR",
           "PolynomialLR", "ReduceLROnPlateau", "SequentialLR", "StepLR"]

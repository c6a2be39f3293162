"""The LRScheduler base (Note [Chainable schedules] in runtime/optim/lr_scheduler.py): `initial_lr` per group,
`last_epoch`, step(), get_last_lr() and state_dict; every schedule subclasses it."""

from __future__ import annotations

from typing import Any

from runtime.compile.step_capture import register_scheduler_base
from runtime.optim.optimizer import Optimizer


def _check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


class LRScheduler:
    """The base: subclasses define `_lr(base_lr, epoch)` (or override `get_lr`)."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   "optimizer")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        """The new lr of each group from its current lr (Note [Chainable schedules])."""
        return [self._chained(group["lr"], base, self.last_epoch)
                for group, base in zip(self.optimizer.param_groups, self.base_lrs, strict=True)]

    def _chained(self, lr: float, base_lr: float, epoch: int) -> float:
        return self._lr(base_lr, epoch)

    def _lr(self, base_lr: float, epoch: int) -> float:
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            # an explicit epoch: the closed form where the schedule has one, else get_lr(), as PyTorch
            self.last_epoch = int(epoch)
            if type(self)._lr is LRScheduler._lr:
                values = self.get_lr()
            else:
                values = [self._lr(base, self.last_epoch) for base in self.base_lrs]
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (and, for LambdaLR, the functions), as PyTorch."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler


register_scheduler_base(LRScheduler)  # stepped inside a compiled function, it ends the capture

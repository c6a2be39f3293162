"""SyncBatchNorm: batch normalisation whose batch statistics are taken over every rank's batch."""

from __future__ import annotations

from typing import Any

from runtime.autograd.grad_mode import no_grad
from runtime.distributed import autograd_ops
from runtime.distributed.process_group import is_initialized, resolve
from runtime.nn.module import Module
from runtime.nn.normalization import _BatchNorm
from runtime.tensor import Tensor


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over N-D inputs (N >= 2) whose training statistics cover the whole global batch: each
    rank's per-channel sum, sum of squares and count are summed over `process_group` with the
    differentiable all-reduce (runtime/distributed/autograd_ops.py), so the gradient also flows through
    the other ranks' statistics. Outside training, or without an initialised process group of more than
    one rank, it is BatchNorm."""

    _dims = (2, 3, 4, 5)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        synced = self.training and is_initialized() and resolve(self.process_group).size() > 1
        if not synced:
            return super().forward(input)
        dims = [0, *range(2, input.dim())]
        count = input.numel() // input.shape[1]
        local = input.sum(dims), (input * input).sum(dims)
        stats = autograd_ops.all_reduce(
            _cat([local[0], local[1], _count(count, input)]), group=self.process_group)
        n = stats[-1]
        mean = stats[:self.num_features] / n
        var = stats[self.num_features:2 * self.num_features] / n - mean * mean
        if self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
                factor = 1.0 / int(self.num_batches_tracked) if self.momentum is None else self.momentum
                total = float(n.item())
                unbiased = var.detach() * (total / max(total - 1.0, 1.0))
                self.running_mean.mul_(1 - factor).add_(mean.detach() * factor)
                self.running_var.mul_(1 - factor).add_(unbiased * factor)
        shape = [1, self.num_features] + [1] * (input.dim() - 2)
        out = (input - mean.reshape(shape)) / (var.reshape(shape) + self.eps).sqrt()
        if self.weight is not None:
            out = out * self.weight.reshape(shape)
        if self.bias is not None:
            out = out + self.bias.reshape(shape)
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """`module` with every BatchNorm layer replaced by a SyncBatchNorm holding the same parameters and
        running statistics (the module itself when it is one)."""
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            sync = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                       process_group)
            if module.affine:
                with no_grad():
                    sync.weight = module.weight
                    sync.bias = module.bias
            sync.running_mean, sync.running_var = module.running_mean, module.running_var
            sync.num_batches_tracked = module.num_batches_tracked
            sync.train(module.training)
            return sync
        for name, child in list(module.named_children()):
            setattr(module, name, cls.convert_sync_batchnorm(child, process_group))
        return module


def _count(count: int, like: Tensor) -> Tensor:
    from runtime import opcall

    return opcall.api.full((1,), float(count), dtype=like.dtype, device=like.device)


def _cat(parts: list[Tensor]) -> Tensor:
    from runtime import opcall

    return opcall.api.cat(parts)

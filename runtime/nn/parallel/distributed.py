"""DistributedDataParallel: one model replica per process, gradients averaged over the ranks in
backward (runtime/nn/parallel/reducer.py), parameters and buffers kept identical by broadcasts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from runtime.autograd.grad_mode import is_grad_enabled, no_grad
from runtime.distributed import collectives
from runtime.distributed.process_group import resolve
from runtime.nn.module import Module
from runtime.nn.parallel.reducer import Reducer
from runtime.tensor import Tensor


class DistributedDataParallel(Module):
    """Data parallelism across processes, with PyTorch's constructor. At construction the module's
    parameters and buffers are broadcast from rank 0 (and their shapes checked across ranks); each
    backward averages the gradients in buckets of `bucket_cap_mb` whose all-reduces start as soon as their
    gradients are ready (Note [Buckets start during backward]); with `broadcast_buffers` the buffers are
    broadcast from rank 0 before each forward. The wrapped module is `.module`, so state-dict keys carry
    the "module." prefix, as PyTorch's."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params: Any = None, param_to_hook_all_reduce: Any = None,
                 mixed_precision: Any = None, device_mesh: Any = None) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps a Module, not {type(module).__name__}")
        self.module = module
        self.process_group = resolve(process_group)
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        every = list(module.named_parameters())
        self._check_same_parameters([p for _, p in every], [n for n, _ in every])
        if init_sync:
            self._broadcast([*module.parameters(), *module.buffers()])
        cap = int((25.0 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.reducer = Reducer([p for _, p in named], [n for n, _ in named], self.process_group, max(cap, 1),
                               find_unused_parameters)

    # -- keeping the replicas identical -------------------------------------------------------------
    def _broadcast(self, tensors: list[Tensor]) -> None:
        root = self.process_group.ranks[0]
        with no_grad():
            works = [collectives.broadcast(t, root, self.process_group, async_op=True)
                     for t in tensors if t.numel()]
            for w in works:
                w.wait()

    def _check_same_parameters(self, params: list[Tensor], names: list[str]) -> None:
        """Every rank must wrap the same parameters (PyTorch checks the same): compare a digest of the
        names, shapes and dtypes, naming the ranks that differ."""
        import zlib

        signature = ";".join(f"{n}:{list(p.shape)}:{p.dtype}" for n, p in zip(names, params, strict=True))
        mine = np.array([zlib.crc32(signature.encode()), len(params)], dtype=np.int64)
        pg = self.process_group
        everyone = np.zeros((pg.size(), 2), dtype=np.int64)
        pg.mpi.allgather(mine, everyone, name="DistributedDataParallel parameter check").wait()
        differ = [pg.ranks[r] for r in range(pg.size()) if not np.array_equal(everyone[r], everyone[0])]
        if differ:
            raise RuntimeError(f"DistributedDataParallel: ranks {differ} wrap a module whose parameters (names, shapes "
                               f"or dtypes) differ from rank {pg.ranks[0]}'s; every rank must build the same model")

    # -- the step -------------------------------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = [b for b in self.module.buffers() if b is not None]
            if buffers:
                self._broadcast(buffers)
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare(output)
        else:
            self.reducer.disarm()
        return output

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, backward accumulates gradients locally; the first backward after it averages the sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

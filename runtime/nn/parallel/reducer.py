"""The gradient reducer of DistributedDataParallel: buckets of parameters whose gradients are averaged
over the ranks with one all-reduce each, started during backward.

Note [Buckets start during backward]
The parameters are grouped into buckets (reverse registration order, which approximates the order in
which backward produces their gradients; one dtype and device per bucket; the first bucket holds at most
1 MiB so that communication starts early, the others `bucket_cap_mb`). Each parameter has a
post-accumulate-grad hook (`Tensor.register_post_accumulate_grad_hook`): when the last gradient of a bucket
has been accumulated, the bucket's gradients are flattened into one buffer and its all-reduce is started
asynchronously (the progress thread of runtime/distributed posts it), while backward goes on computing the
gradients of the next buckets. When the last bucket has started, the hook that started it waits for every
bucket in order, divides by the world size and writes each parameter's averaged gradient back into
`.grad`, so `backward()` returns with synchronised gradients.

With `find_unused_parameters=True`, the forward's output graph is walked once per iteration: parameters it
does not reach are marked ready at once (their part of the buffer is zeros), and each bucket carries one
extra element per parameter counting the ranks that used it, so a parameter no rank used keeps its `.grad`
as it was (None), as PyTorch's. Without it, a parameter that gets no gradient leaves its bucket unfinished;
the next forward raises and names the parameters, as PyTorch does.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime.autograd.node import AccumulateGrad
from runtime.distributed.reduce_op import ReduceOp
from runtime.tensor import Tensor

FIRST_BUCKET_BYTES = 1 << 20


def _xp(t: Tensor) -> Any:
    if t.device.type == "cpu":
        return np
    from runtime.cuda import require_cupy

    return require_cupy()


def _host(array: Any, backend: str) -> Any:
    return np.asarray(array) if backend == "mpi" else array


class _Bucket:
    __slots__ = ("indices", "sizes", "pending", "used", "work", "flat")

    def __init__(self, indices: list[int], sizes: list[int]) -> None:
        self.indices, self.sizes = indices, sizes
        self.pending = len(indices)
        self.used = [False] * len(indices)
        self.work: Any = None
        self.flat: Any = None


class Reducer:
    """Averages the gradients of `params` over `group` during backward (Note [Buckets start during
    backward])."""

    def __init__(self, params: Sequence[Tensor], names: Sequence[str], group: Any, bucket_bytes: int,
                 find_unused: bool) -> None:
        self.params, self.names, self.group = list(params), list(names), group
        self.find_unused = find_unused
        self.buckets = self._make_buckets(bucket_bytes)
        self.where = {}  # param index -> (bucket, position)
        for b, bucket in enumerate(self.buckets):
            for pos, i in enumerate(bucket.indices):
                self.where[i] = (b, pos)
        self.armed = False
        self.started = 0
        # seconds the bucket all-reduces took, and the part of it backward() waited for (bench_distributed.py)
        self.comm_seconds = 0.0
        self.exposed_seconds = 0.0
        self.handles = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(self.params)]

    def _make_buckets(self, cap: int) -> list[_Bucket]:
        buckets: list[_Bucket] = []
        current: list[int] = []
        size, key, limit = 0, None, min(cap, FIRST_BUCKET_BYTES)
        for i in reversed(range(len(self.params))):
            p = self.params[i]
            pkey = (p.dtype, str(p.device))
            nbytes = p.numel() * p.element_size()
            if current and (pkey != key or size + nbytes > limit):
                buckets.append(_Bucket(current, [self.params[j].numel() for j in current]))
                current, size, limit = [], 0, cap
            current.append(i)
            size += nbytes
            key = pkey
        if current:
            buckets.append(_Bucket(current, [self.params[j].numel() for j in current]))
        return buckets

    def _make_hook(self, index: int) -> Any:
        def hook(_param: Tensor) -> None:
            if self.armed:
                self._mark_ready(index, used=True)
        return hook

    # -- one iteration --------------------------------------------------------------------------------
    def unfinished(self) -> list[str]:
        """Names of the parameters whose gradients the last armed backward did not reduce."""
        if not self.armed or self.started == 0 and all(b.pending == len(b.indices) for b in self.buckets):
            return []
        return [self.names[i] for b in self.buckets if b.work is None for i, u in zip(b.indices, b.used, strict=True)
                if not u]

    def prepare(self, outputs: Any) -> None:
        """Arm the hooks for the backward of `outputs` (called by the forward that produced them)."""
        missing = self.unfinished()
        if missing:
            self.armed = False
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. The module "
                "has parameters that were not used in producing the loss: "
                f"{', '.join(missing)}. Pass find_unused_parameters=True to DistributedDataParallel, or make sure "
                "every output of forward takes part in the loss.")
        for bucket in self.buckets:
            bucket.pending = len(bucket.indices)
            bucket.used = [False] * len(bucket.indices)
            bucket.work = bucket.flat = None
        self.started = 0
        self.armed = True
        if self.find_unused:
            reached = _reached_leaves(outputs)
            for i, p in enumerate(self.params):
                if id(p) not in reached:
                    self._mark_ready(i, used=False)

    def disarm(self) -> None:
        self.armed = False

    def _mark_ready(self, index: int, used: bool) -> None:
        b, pos = self.where[index]
        bucket = self.buckets[b]
        if bucket.used[pos] or bucket.pending == 0:
            return
        bucket.used[pos] = used
        bucket.pending -= 1
        if bucket.pending == 0:
            self._start(bucket)
            self.started += 1
            if self.started == len(self.buckets):
                self._finish()

    def _start(self, bucket: _Bucket) -> None:
        backend = self.group.backend
        parts = []
        for i, used in zip(bucket.indices, bucket.used, strict=True):
            p = self.params[i]
            g = p.grad
            if g is None or not used:  # unused here: contributes zeros
                parts.append(_xp(p).zeros(p.numel(), dtype=p._data.dtype))
            else:
                parts.append(_host(g._data, backend).reshape(-1))
        if self.find_unused:
            parts.append(_xp(self.params[bucket.indices[0]]).asarray(bucket.used, dtype=parts[0].dtype))
        xp = _xp(self.params[bucket.indices[0]])
        bucket.flat = _host(xp.concatenate(parts), backend)
        bucket.work = self.group.comm.allreduce(bucket.flat, ReduceOp.SUM, name="DistributedDataParallel bucket")

    def _finish(self) -> None:
        self.armed = False
        world = self.group.size()
        G = opcall.api
        for bucket in self.buckets:
            waited = time.perf_counter()
            bucket.work.wait()
            self.exposed_seconds += time.perf_counter() - waited
            self.comm_seconds += bucket.work.completed - bucket.work.started
            flat = bucket.flat
            counts = flat[-len(bucket.indices):] if self.find_unused else None
            offset = 0
            for k, (i, n) in enumerate(zip(bucket.indices, bucket.sizes, strict=True)):
                part = flat[offset:offset + n]
                offset += n
                if counts is not None and counts[k] == 0:
                    continue  # no rank used it: its .grad stays as it was
                p = self.params[i]
                if p.grad is None:
                    p.grad = G.zeros_like(p)
                grad = p.grad
                target = np.asarray(grad._data) if self.group.backend == "mpi" else grad._data
                target[...] = (part / world).reshape(target.shape)
                grad._bump_version()
            bucket.flat = None

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def _reached_leaves(outputs: Any) -> set[int]:
    """ids of the leaves whose gradients the graph behind `outputs` computes."""
    roots: list[Any] = []

    def collect(x: Any) -> None:
        if isinstance(x, Tensor):
            if x.grad_fn is not None:
                roots.append(x.grad_fn)
            elif x.requires_grad:
                roots.append(None)
                leaves.add(id(x))
        elif isinstance(x, list | tuple):
            for v in x:
                collect(v)
        elif isinstance(x, dict):
            for v in x.values():
                collect(v)

    leaves: set[int] = set()
    collect(outputs)
    seen: set[int] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            var = node.variable
            if var is not None:
                leaves.add(id(var))
            continue
        for edge in node.next_edges:
            if edge is not None:
                stack.append(edge[0])
    return leaves

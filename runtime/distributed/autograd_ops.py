"""Collectives that autograd differentiates (PyTorch's `torch.distributed.nn.functional`): the gradient of
a sum all-reduce is the sum all-reduce of the gradient. SyncBatchNorm's statistics go through it."""

from __future__ import annotations

from typing import Any

from runtime.autograd.grad_mode import no_grad
from runtime.autograd.node import Node, collect_next_edges, set_history
from runtime.distributed import collectives
from runtime.distributed.reduce_op import ReduceOp
from runtime.tensor import Tensor


class AllReduceBackward(Node):
    def __init__(self, group: Any) -> None:
        super().__init__()
        self.group = group

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        grad = grads[0]
        if grad is None:
            return [None]
        out = grad.contiguous().clone()
        collectives.all_reduce(out, ReduceOp.SUM, self.group)
        return [out]


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None) -> Tensor:
    """A new tensor holding the sum of `tensor` over the group; differentiable (sums only)."""
    if op is not ReduceOp.SUM:
        raise ValueError(f"the differentiable all_reduce takes ReduceOp.SUM, not {op.name}")
    with no_grad():
        out = tensor.detach().contiguous().clone()
        collectives.all_reduce(out, ReduceOp.SUM, group)
    if tensor.requires_grad:
        node = AllReduceBackward(group)
        node.next_edges = collect_next_edges(tensor)
        set_history(out, node)
    return out

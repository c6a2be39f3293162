"""Autograd kernels the runtime provides (the generated ones are in generated/)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime.autograd.node import NotImplementedNode, any_requires_grad, collect_next_edges, set_history
from runtime.dispatcher import AUTOGRAD_BIT, tls


def not_implemented_autograd(op_handle: Any) -> Callable[..., Any]:
    """The Autograd kernel of an op without a derivative: the op runs, and if any input requires grad
    its floating outputs get a grad_fn that fails at backward() ("derivative for OP is not implemented")."""
    name = op_handle.name
    positions = tuple(op_handle.tensor_positions)

    def kernel(*args: Any) -> Any:
        out = op_handle.redispatch_below_autograd(*args)
        if tls.mask & AUTOGRAD_BIT:
            tensors = [args[i] for i in positions if i < len(args)]
            if any_requires_grad(*tensors):
                node = NotImplementedNode(name)
                node.next_edges = collect_next_edges(*tensors)
                set_history(tuple(_tensors(out)), node)
        return out

    kernel.__qualname__ = f"not_implemented_autograd[{name}]"
    return kernel


def _tensors(out: Any) -> list[Any]:
    """The tensors among an op's outputs (a tuple may hold lists of tensors)."""
    if isinstance(out, list | tuple):
        return [t for o in out for t in _tensors(o)]
    return [out] if hasattr(out, "_grad_fn") else []

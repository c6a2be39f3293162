"""`G.autograd.Variable`: PyTorch's pre-0.4 wrapper, kept as a function so old tutorials'
`Variable(x, requires_grad=True)` run unchanged."""

from __future__ import annotations

from typing import Any


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:
    """A new leaf sharing `data`'s memory (no history, as PyTorch's), requiring grad when asked."""
    from runtime.tensor import Tensor
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    return data.detach().requires_grad_(requires_grad)

"""CompositeImplicitAutograd kernels: ops written with other ops (they get autograd for free)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import strides as S


def _G() -> Any:
    import generated
    return generated


def reshape(self: Any, shape: Sequence[int]) -> Any:
    """A view when the strides allow one, else a copy (as PyTorch's reshape)."""
    G = _G()
    size = S.infer_size(tuple(shape), self.numel())
    if S.view_strides(self.shape, self.stride(), size) is not None:
        return G.view(self, size)
    return G.view(G.clone(self), size)


def contiguous(self: Any, memory_format: object = None) -> Any:
    return self if self.is_contiguous() else _G().clone(self)


def matmul(self: Any, other: Any) -> Any:
    """Matrix product with PyTorch's rules for 1-D, 2-D and batched operands."""
    G = _G()
    a, b = self.dim(), other.dim()
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D")
    if a == 1 and b == 1:
        if self.shape != other.shape:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src "
                               f"[{other.shape[0]}] to have the same number of elements, but got "
                               f"{self.shape[0]} and {other.shape[0]} elements respectively")
        return G.sum(G.mul(self, other))
    if a == 2 and b == 1:
        return G.squeeze(G.mm(self, G.unsqueeze(other, 1)), 1)
    if a == 1 and b == 2:
        return G.squeeze(G.mm(G.unsqueeze(self, 0), other), 0)
    if a == 2 and b == 2:
        return G.mm(self, other)
    if b <= 2 and a >= 3:
        # fold the batch into rows: (..., n, k) @ (k, m)
        rhs = other if b == 2 else G.unsqueeze(other, 1)
        out = G.mm(G.reshape(self, (-1, self.shape[-1])), rhs)
        out = G.reshape(out, (*self.shape[:-1], rhs.shape[-1]))
        return out if b == 2 else G.squeeze(out, -1)
    # batched: broadcast the batch dims and use bmm
    lhs = self if a > 1 else G.unsqueeze(self, 0)
    rhs = other if b > 1 else G.unsqueeze(other, 1)
    batch = S.broadcast_shapes(tuple(lhs.shape[:-2]), tuple(rhs.shape[:-2]))
    n, k, m = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
    lhs3 = G.reshape(G.expand(lhs, (*batch, n, k)), (-1, n, k))
    rhs3 = G.reshape(G.expand(rhs, (*batch, rhs.shape[-2], m)), (-1, rhs.shape[-2], m))
    out = G.reshape(G.bmm(lhs3, rhs3), (*batch, n, m))
    if a == 1:
        out = G.squeeze(out, -2)
    if b == 1:
        out = G.squeeze(out, -1)
    return out

"""CompositeImplicitAutograd ops built from other ops (autograd for free): norms, linear, outer,
stack/chunk/flatten/tile, argsort, dropout, the losses and the pooling/convolution wrappers."""

from __future__ import annotations

from typing import Any


def _G() -> Any:
    import generated
    return generated


def norm(self: Any, p: Any = 2) -> Any:
    return _G().linalg_vector_norm(self, 2 if p is None else p)


def norm_dim(self: Any, p: Any, dim: Any, keepdim: bool = False) -> Any:
    return _G().linalg_vector_norm(self, 2 if p is None else p, dim, keepdim)

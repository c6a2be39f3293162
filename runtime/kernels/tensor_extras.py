"""Ops of PyTorch's Tensor surface built from other ops: the complex-number queries on real tensors
(`angle`, `isreal`, `real`), `fill_diagonal_`, `nonzero_static`, `new_empty_strided`,
`unsafe_split_with_sizes`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from runtime import dtypes, opcall


def _G() -> Any:
    return opcall.api


# -- complex-number queries of real tensors -------------------------------------------------------------
def angle(self: Any) -> Any:
    """The argument of each element as a complex number: pi for negatives, 0 otherwise, NaN kept; integer
    and bool inputs give the default float dtype (CompositeExplicitAutograd: its gradient is zero)."""
    G = _G()
    x = self if self.dtype.is_floating_point else self.to(dtypes.get_default_dtype())
    return G.where(G.isnan(x), x, (x < 0).to(x.dtype) * math.pi)


def isreal(self: Any) -> Any:
    """True everywhere: every opgen dtype is real."""
    return _G().ones_like(self, dtype=dtypes.bool_)


def real(self: Any) -> Any:
    """The real part: the tensor itself, every opgen dtype being real."""
    return self


# -- fill_diagonal_, nonzero_static, new_empty_strided, unsafe_split_with_sizes ---------------------------
def fill_diagonal_(self: Any, fill_value: Any, wrap: bool = False) -> Any:
    """Write `fill_value` on the main diagonal (all dims of equal size beyond 2-D); a tall matrix with
    wrap=True starts the diagonal again every (columns + 1) rows, as PyTorch's."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    sizes = tuple(self.shape)
    if self.dim() > 2 and any(s != sizes[0] for s in sizes):
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.dim() > 2:
        n = sizes[0]
        diagonal = self.as_strided((n,), (sum(self.stride()),), self.storage_offset())
        diagonal.fill_(fill_value)
        return self
    rows, cols = sizes
    start = 0
    while start < rows:
        self.narrow(0, start, rows - start).diagonal().fill_(fill_value)
        if not wrap or rows <= cols:
            break
        start += cols + 1
    return self


def nonzero_static(self: Any, size: int, fill_value: int = -1) -> Any:
    """nonzero() with exactly `size` rows: the first `size` indices, padded with rows of `fill_value`."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got size = {size}")
    G = _G()
    if self.is_meta:  # the rows' values are data, their number is `size` (Note [Meta tensors])
        return G.empty((size, self.dim()), dtype=dtypes.int64, device="meta")
    found = G.nonzero(self)
    if found.shape[0] >= size:
        return found[:size]
    padding = G.full((size - found.shape[0], self.dim()), fill_value, dtype=dtypes.int64, device=self.device)
    return G.cat([found, padding])


def new_empty_strided(self: Any, size: Sequence[int], stride: Sequence[int], dtype: Any = None, layout: Any = None,
                      device: Any = None, pin_memory: Any = None) -> Any:
    """An uninitialised tensor of that size and stride, in this tensor's dtype and device unless given."""
    return _G().empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                              device=self.device if device is None else device)


def unsafe_split_with_sizes(self: Any, split_sizes: Sequence[int], dim: int = 0) -> Any:
    """split_with_sizes (the views opgen makes are always safe to modify in place)."""
    return _G().split_with_sizes(self, split_sizes, dim)

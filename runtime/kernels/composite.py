"""CompositeImplicitAutograd kernels: ops written with other ops (they get autograd for free)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from runtime import dtypes, opcall
from runtime import strides as S
from runtime.dispatcher import OP_TABLES, dispatch_key
from runtime.kernels.views import NotViewable, int_list
from runtime.layout import contiguous_format, format_name, format_strides


def _G() -> Any:
    return opcall.api


def reshape(self: Any, shape: Sequence[int]) -> Any:
    """A view when the strides allow one, else a copy (as PyTorch's reshape): `view` says which, so a
    reshape that is a view costs one view, dispatched on view's table as its op function would (Note
    [Indexing without the op functions] in runtime/indexing.py)."""
    try:
        return OP_TABLES["view"][dispatch_key(self._keys)](self, shape)
    except NotViewable:
        pass
    except TypeError:
        int_list(shape, "reshape", "shape")  # names reshape's argument where that is what is wrong
        raise
    ops = opcall.ops
    return ops.view(ops.clone(self, memory_format=contiguous_format), shape)


def contiguous(self: Any, memory_format: object = contiguous_format) -> Any:
    """`self` when already laid out in `memory_format` (row-major by default), else a clone in it."""
    name = "contiguous_format" if memory_format is None else format_name("contiguous", memory_format)
    if name == "contiguous_format":
        return self if self.is_contiguous() else _G().clone(self, memory_format=contiguous_format)
    if name == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    want = format_strides("contiguous", memory_format, tuple(self.shape))
    same = all(n == 1 or st == w for n, st, w in zip(self.shape, self.stride(), want, strict=True))
    return self if same else _G().clone(self, memory_format=memory_format)


def narrow(self: Any, dim: int, start: int, length: int) -> Any:
    """`length` positions of `dim` from `start`: a slice, after PyTorch's range checks."""
    shape = self._data.shape
    n = len(shape)
    if dim.__class__ is int and -n <= dim < n and start.__class__ is int and length.__class__ is int:
        dim += n if dim < 0 else 0
        first = start + shape[dim] if start < 0 else start
        if 0 <= first and 0 <= length and first + length <= shape[dim]:  # plainly valid
            return opcall.ops.slice(self, dim, first, first + length, 1)
    S.narrow(self.shape, self.stride(), 0, dim, int(start), int(length))  # validates, raises PyTorch's errors
    dim = S.wrap_dim(dim, self.dim())
    start = int(start) + (self.shape[dim] if start < 0 else 0)
    return _G().slice(self, dim, start, start + int(length), 1)


def unbind(self: Any, dim: int = 0) -> list[Any]:
    if self.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = S.wrap_dim(dim, self.dim())
    select = _G().select
    return [select(self, dim, i) for i in range(self.shape[dim])]


def split(self: Any, split_size: Any, dim: int = 0) -> list[Any]:
    """Pieces of `split_size` along `dim` (the last may be smaller), or of each size in a list."""
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = S.wrap_dim(dim, self.dim())
    size = self.shape[dim]
    if isinstance(split_size, int):
        if split_size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
        if split_size == 0:
            if size != 0:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size "
                                   f"of {size}")
            sizes = [0]
        else:
            sizes = [split_size] * (size // split_size) + ([size % split_size] if size % split_size else [])
            sizes = sizes or [0]
    else:
        sizes = [int(s) for s in split_size]
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                               f"size at dimension {dim}), but got split_sizes={sizes}")
    narrow_ = _G().narrow
    out, start = [], 0
    for n in sizes:
        out.append(narrow_(self, dim, start, n))
        start += n
    return out


def chunk(self: Any, chunks: int, dim: int = 0) -> list[Any]:
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if self.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    dim = S.wrap_dim(dim, self.dim())
    size = self.shape[dim]
    if size == 0:  # as PyTorch: `chunks` empty pieces, where split would give one
        return [self.narrow(dim, 0, 0) for _ in range(chunks)]
    return split(self, -(-size // chunks), dim)


def flatten(self: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    if start_dim == 0 and end_dim == -1 and self._data.ndim > 1:  # the whole tensor: a view where one exists
        try:
            return OP_TABLES["view"][dispatch_key(self._keys)](self, -1)
        except NotViewable:
            pass
    shape = S.flatten_shape(self.shape, start_dim, end_dim)
    return self if shape == tuple(self.shape) else _G().reshape(self, shape)


def unflatten(self: Any, dim: int, sizes: Sequence[int]) -> Any:
    return _G().view(self, S.unflatten_shape(self.shape, dim, tuple(sizes))) if self.is_contiguous() \
        else _G().reshape(self, S.unflatten_shape(self.shape, dim, tuple(sizes)))


def expand_as(self: Any, other: Any) -> Any:
    return _G().expand(self, tuple(other.shape))


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
        if self.dtype is dtypes.bool_ or other.dtype is dtypes.bool_:
            return G.dot(self, other)  # its backend kernel refuses bool as PyTorch's (checks.check_product_dtype)
        product = G.mul(self, other)  # an integer dot keeps its dtype, wrapping, as PyTorch's (sum would widen)
        return G.sum(product, dtype=product.dtype if product.dtype.category == dtypes.INTEGRAL else None)
    if a == 2 and b == 1:
        return G.squeeze(G.mm(self, G.unsqueeze(other, 1)), 1)
    if a == 1 and b == 2:
        return G.squeeze(G.mm(G.unsqueeze(self, 0), other), 0)
    if a == 2 and b == 2:
        return G.mm(self, other)
    if b <= 2 and a >= 3:
        # fold the batch into rows: (..., n, k) @ (k, m)
        rhs = other if b == 2 else G.unsqueeze(other, 1)
        out = G.mm(G.reshape(self, (math.prod(self.shape[:-1]), self.shape[-1])), rhs)
        out = G.reshape(out, (*self.shape[:-1], rhs.shape[-1]))
        return out if b == 2 else G.squeeze(out, -1)
    # batched: broadcast the batch dims and use bmm
    lhs = self if a > 1 else G.unsqueeze(self, 0)
    rhs = other if b > 1 else G.unsqueeze(other, 1)
    batch = S.broadcast_shapes(tuple(lhs.shape[:-2]), tuple(rhs.shape[:-2]))
    n, k, m = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
    nb = math.prod(batch)  # not -1: a matrix with no elements leaves -1 undetermined
    lhs3 = G.reshape(G.expand(lhs, (*batch, n, k)), (nb, n, k))
    rhs3 = G.reshape(G.expand(rhs, (*batch, rhs.shape[-2], m)), (nb, rhs.shape[-2], m))
    out = G.reshape(G.bmm(lhs3, rhs3), (*batch, n, m))
    if a == 1:
        out = G.squeeze(out, -2)
    if b == 1:
        out = G.squeeze(out, -1)
    return out

"""Shape ops that copy (CompositeExplicitAutograd, NumPy or CuPy): cat, repeat, roll, flip, tril, triu.
(Views such as split/chunk/flatten live in runtime/kernels/views.py.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import opcall
from runtime import strides as S
from runtime.kernels._xp import result_type, wrap, xp_of
from runtime.kernels.views import int_list
from runtime.tensor import Tensor


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along `dim`; 1-D empty tensors (shape [0]) are skipped, as in PyTorch."""
    if len(tensors) == 0:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    dt = result_type(*tensors)
    parts = [t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
    if not parts:
        return wrap(tensors[0]._data.astype(dt.np), tensors[0]._data, dt)
    ref = parts[0]
    if ref.dim() == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = S.wrap_dim(dim, ref.dim())
    for i, t in enumerate(parts):
        if t.dim() != ref.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.dim()} and {t.dim()}")
        for k in range(ref.dim()):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    xp = xp_of(ref._data)
    shape = list(ref.shape)
    shape[d] = sum(t.shape[d] for t in parts)
    out = xp.empty(shape, dt.np)  # row-major, as PyTorch's (NumPy's own result follows F-ordered inputs)
    xp.concatenate([t._data.astype(dt.np, copy=False) for t in parts], axis=d, out=out)
    return wrap(out, ref._data, dt)


def repeat(self: Tensor, repeats: Sequence[int]) -> Tensor:
    reps = int_list(repeats, "repeat", "repeats")
    if len(reps) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(reps)}")
    a = self._data.reshape((1,) * (len(reps) - self.dim()) + self.shape)
    return wrap(xp_of(a).tile(a, reps), a, self._dtype)


def roll(self: Tensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> Tensor:
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    a = self._data
    xp = xp_of(a)
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"`shifts` required to be of size 1 when `dims` is empty, got {len(shifts)}")
        return wrap(xp.roll(a.reshape(-1), shifts[0]).reshape(a.shape), a, self._dtype)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    axes = tuple(S.wrap_dim(d, a.ndim) for d in dims)  # row-major, as PyTorch's (np.roll keeps a's order)
    return wrap(xp.ascontiguousarray(xp.roll(a, tuple(shifts), axis=axes)), a, self._dtype)


def flip(self: Tensor, dims: Sequence[int]) -> Tensor:
    a = self._data
    axes = tuple(S.wrap_dim(d, a.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes} appears multiple times in the list of dims")
    if a.ndim == 0 or not axes:
        return wrap(a.copy(), a, self._dtype)
    return wrap(xp_of(a).flip(a, axis=axes).copy(), a, self._dtype)


def _tri(self: Tensor, diagonal: int, lower: bool, op: str) -> Tensor:
    a = self._data
    if a.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    xp = xp_of(a)
    return wrap((xp.tril if lower else xp.triu)(a, k=diagonal), a, self._dtype)


def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    return _tri(self, diagonal, True, "tril")


def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    return _tri(self, diagonal, False, "triu")


def stack(tensors: Sequence[Any], dim: int = 0) -> Any:
    """CompositeImplicitAutograd: unsqueeze each tensor at `dim`, then cat."""
    G = opcall.api
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                               f"{list(t.shape)} at entry {i}")
    d = S.wrap_dim(dim, len(shape) + 1)
    return G.cat([G.unsqueeze(t, d) for t in tensors], d)


def tile(self: Any, dims: Sequence[int]) -> Any:
    """CompositeImplicitAutograd: `repeat` with missing leading repeats taken as 1."""
    reps = list(dims)
    if len(reps) < self.dim():
        reps = [1] * (self.dim() - len(reps)) + reps
    return self.repeat(reps)

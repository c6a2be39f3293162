"""View kernels: new tensors over the same memory, never a copy (CompositeExplicitAutograd: CPU and CUDA).

Geometry comes from the pure functions of runtime/strides.py; the array view is then made with the
array module's own view operations (NumPy or CuPy), see Note [Tensor data is a strided array view].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from runtime import strides as S
from runtime.tensor import Tensor


def _as_strided(self: Tensor, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> Tensor:
    """A view of `self` with element `strides`, starting `offset` elements after `self`'s first element."""
    data = self._data
    item = self._dtype.itemsize
    if offset:
        data = data.reshape(-1)[offset:] if data.flags.c_contiguous else _shifted(data, offset)
    byte_strides = tuple(s * item for s in strides)
    if isinstance(data, np.ndarray):
        array = np.lib.stride_tricks.as_strided(data, tuple(shape), byte_strides, writeable=data.flags.writeable)
    else:
        import cupy
        array = cupy.lib.stride_tricks.as_strided(data, tuple(shape), byte_strides)
    return self._view(array)


def _shifted(data: object, offset: int) -> object:
    # A 1-element-wide window starting `offset` elements later, built with a strided view.
    flat_strides = (data.itemsize,)  # type: ignore[attr-defined]
    if isinstance(data, np.ndarray):
        base = np.lib.stride_tricks.as_strided(data, (offset + 1,), flat_strides)
    else:
        import cupy
        base = cupy.lib.stride_tricks.as_strided(data, (offset + 1,), flat_strides)
    return base[offset:]


def t(self: Tensor) -> Tensor:
    if self._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D")
    return self._view(self._data.T)


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    n = self._data.ndim
    d0, d1 = S.wrap_dim(dim0, n), S.wrap_dim(dim1, n)
    perm = list(range(n))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return self._view(self._data.transpose(perm))


def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    shape, _ = S.permute(self.shape, self.stride(), tuple(dims))  # validates the permutation
    n = self._data.ndim
    return self._view(self._data.transpose([S.wrap_dim(d, n) for d in dims]))


def expand(self: Tensor, size: Sequence[int], implicit: bool = False) -> Tensor:
    shape, strides = S.expand(self.shape, self.stride(), tuple(size))
    return _as_strided(self, shape, strides)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    shape, strides = S.unsqueeze(self.shape, self.stride(), dim)
    return _as_strided(self, shape, strides)


def squeeze_dim(self: Tensor, dim: int) -> Tensor:
    shape, strides = S.squeeze(self.shape, self.stride(), dim)
    return _as_strided(self, shape, strides)


def squeeze(self: Tensor) -> Tensor:
    shape, strides = S.squeeze(self.shape, self.stride(), None)
    return _as_strided(self, shape, strides)


def view(self: Tensor, size: Sequence[int]) -> Tensor:
    shape = S.infer_size(tuple(size), self.numel())
    strides = S.view_strides(self.shape, self.stride(), shape)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _as_strided(self, shape, strides)


def clone(self: Tensor, memory_format: object = None) -> Tensor:
    return Tensor._wrap(self._data.copy(), self._dtype)

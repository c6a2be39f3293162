"""Advanced indexing kernels: index, index_put, index_put_ (CompositeExplicitAutograd: CPU and CUDA).

`indices` is PyTorch's `Tensor?[]`: one entry per leading dim of `self`, None for a dim taken whole.
The entries become one NumPy/CuPy index tuple, so the placement of the result dims follows NumPy's
rule, which is also PyTorch's: advanced indices next to each other put their broadcast dims where
they stand; separated by a slice, the broadcast dims go first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime.kernels.copy import move
from runtime.tensor import Tensor

_INDEX_DTYPES = (dtypes.int64, dtypes.int32, dtypes.int16, dtypes.int8, dtypes.uint8, dtypes.bool_)


def _key(self: Tensor, indices: Sequence[Tensor | None]) -> tuple[Any, ...]:
    data = self._data
    if len(indices) == 1 and indices[0] is not None:  # one index tensor (`t[idx]`, `t[mask] = v`), whose
        i = indices[0]  # array is the key when it is plainly valid: a long index, or a bool mask of t's sizes
        a = i._data
        if i._device is self._device and (i._dtype is dtypes.int64 and data.ndim
                                          or i._dtype is dtypes.bool_ and a.shape == data.shape[:a.ndim]):
            return (a,)
    consumed = 0
    key: list[Any] = []
    for i in indices:
        if i is None:
            key.append(slice(None))
            consumed += 1
            continue
        if i._dtype not in _INDEX_DTYPES:
            raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors, got {i._dtype}")
        a = i._data
        if i._device is not self._device and i._device != self._device:
            a = move(a, self._device)
        if i._dtype is not dtypes.bool_ and i._dtype is not dtypes.uint8:
            consumed += 1
            key.append(a)
            continue
        if i._dtype is dtypes.uint8:
            a = a.astype(bool)  # PyTorch: a byte index is a mask
        for d in range(a.ndim):  # a k-dim mask covers k dims, whose sizes it must match
            if consumed + d < data.ndim and a.shape[d] != data.shape[consumed + d]:
                raise IndexError(f"The shape of the mask {list(a.shape)} at index {d} does not match the "
                                 f"shape of the indexed tensor {list(data.shape)} at index {consumed + d}")
        consumed += a.ndim
        key.append(a)
    if consumed > data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {data.ndim}")
    return tuple(key)


def _fix(e: IndexError) -> IndexError:
    return IndexError(str(e).replace("axis", "dimension"))


def index(self: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
    key = _key(self, indices)
    try:
        result = self._data[key]
    except IndexError as e:
        raise _fix(e) from None
    if not result.flags.c_contiguous:  # NumPy lays out advanced indices after a slice last; PyTorch's (and
        result = result.copy()  # opgen's Meta kernel's) result is row-major
    return Tensor._wrap(result, self._dtype)


def index_put_(self: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False) -> Tensor:
    if values._dtype is not self._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{self._dtype.name} for the destination and {values._dtype.name} for the source.")
    key = _key(self, indices)
    src = values._data if values._device is self._device or values._device == self._device \
        else move(values._data, self._device)
    try:
        if not accumulate:
            self._data[key] = src
        elif isinstance(self._data, np.ndarray):
            np.add.at(self._data, key, src)
        else:
            import cupyx
            cupyx.scatter_add(self._data, key, src)
    except IndexError as e:
        raise _fix(e) from None
    except ValueError as e:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(self._data[key].shape)} ({e})") from None
    return self


def put_scalar(self: Tensor, index: Tensor, value: bool | int | float) -> None:
    """`index_put_(self, [index], tensor(value))` for a Python number on the CPU, without making the 0-d
    tensor: NumPy casts the number as it would cast it into that tensor (Note [Indexing composes ops])."""
    key = _key(self, (index,))
    try:
        self._data[key] = value
    except IndexError as e:
        raise _fix(e) from None


def index_put(self: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False) -> Tensor:
    out = Tensor._wrap(self._data.copy(), self._dtype)
    return index_put_(out, indices, values, accumulate)

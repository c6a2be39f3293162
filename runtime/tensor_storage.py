"""Ops that change which memory a tensor views: `resize_`, `resize_as_` (ops of native_functions.yaml,
CompositeImplicitAutograd) and `set_` (a Tensor method: its Storage arguments are the runtime's objects).

Note [resize_ and set_]
Both keep the tensor object and change its geometry over a storage. `resize_` keeps the storage while the
new size fits in it from the tensor's offset (the view becomes contiguous there, the elements kept are the
storage's), else it moves the tensor to a new, larger storage holding a copy of the old storage's bytes:
there PyTorch grows the one storage that every tensor sharing it sees, while opgen's other tensors keep
the old memory (views are arrays over their memory: Note [Tensor data is a strided array view]).
`set_(source)` makes the tensor share `source`'s storage (version counter included) and geometry;
`set_(source, offset, size, stride)` views `source`'s storage (a Tensor's or a Storage) with that geometry,
checked to lie inside it: a geometry past the storage's end is refused (PyTorch grows a resizable storage
there, for the same reason opgen cannot). Neither is recorded by autograd: a tensor that requires grad is refused, as
PyTorch refuses a leaf; both bump the version counter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime import strides as S
from runtime.kernels.views import strided_view
from runtime.storage import Storage
from runtime.tensor import Tensor, install_methods


def _byte_view(array: Any) -> Any:
    """The bytes of a contiguous NumPy/CuPy array as a 1-D uint8 array over the same memory."""
    return array.reshape(-1).view(np.uint8)


def _sizes(size: Any) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], Sequence):
        size = size[0]
    shape = tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    return shape


def _geometry_from(self: Tensor, storage: Storage, byte_offset: int, shape: tuple[int, ...],
                   stride: tuple[int, ...]) -> Any:
    """An array of self's element type over `storage`, starting `byte_offset` bytes in, of that geometry."""
    item = self._dtype.itemsize
    memory = _byte_view(storage.data)
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    last = sum((n - 1) * st for n, st in zip(shape, stride, strict=True))  # the farthest element, in elements
    extent = byte_offset + (last + 1) * item if S.numel(shape) else byte_offset
    if extent > memory.nbytes or byte_offset < 0:
        raise RuntimeError(f"setStorage: sizes {list(shape)}, strides {list(stride)}, storage offset "
                           f"{byte_offset // item}, and itemsize {item} requiring a storage size of {extent} are "
                           f"out of bounds for storage of size {memory.nbytes}")
    count = (memory.nbytes - byte_offset) // item
    flat = memory[byte_offset:byte_offset + count * item].view(self._data.dtype)
    return strided_view(flat, shape, tuple(s * item for s in stride))


def _refuse_grad(self: Tensor, name: str) -> None:
    if self._requires_grad:
        raise RuntimeError(f"cannot {name} variables that require grad")


def resize_(self: Tensor, size: Sequence[int], memory_format: Any = None) -> Tensor:
    """Give the tensor `size` (contiguous), keeping its storage where the size fits (Note [resize_ and set_])."""
    shape = _sizes(size)
    _refuse_grad(self, "resize")
    if shape == tuple(self.shape):
        return self
    item = self._dtype.itemsize
    storage = old = self.storage
    start = self.data_ptr() - storage.data_ptr()
    need = start + S.numel(shape) * item
    if need > storage.nbytes:
        grown = opcall.api.empty((need + item - 1) // item, dtype=self._dtype, device=self._device)
        if self._device.type != "meta":  # a meta storage has no bytes to carry over
            _byte_view(grown._data)[:storage.nbytes] = _byte_view(storage.data)
        storage = grown.storage
    self._data = _geometry_from(self, storage, start, shape, S.contiguous_strides(shape))
    self._storage = storage
    if storage is not old:
        self._base = None  # no longer a view of its base's memory
    return self


def resize_as_(self: Tensor, the_template: Tensor, memory_format: Any = None) -> Tensor:
    """resize_ to the template's size."""
    return resize_(self, tuple(the_template.shape), memory_format)


def set_(self: Tensor, source: Any = None, storage_offset: int = 0, size: Sequence[int] | None = None,
         stride: Sequence[int] | None = None) -> Tensor:
    """View `source`'s memory: a Tensor (its storage and geometry, or `size`/`stride` from
    `storage_offset`), a Storage (all of it as 1-D, or that geometry), or nothing (an empty tensor)."""
    _refuse_grad(self, "set_ on")
    if source is None:
        empty = opcall.api.empty(0, dtype=self._dtype, device=self._device)
        self._data, self._storage, self._base = empty._data, None, None
        self._bump_version()
        return self
    if isinstance(source, Tensor):
        if source._dtype is not self._dtype:
            raise RuntimeError(f"Could not set tensor of type {source._dtype.name} to a tensor of type "
                               f"{self._dtype.name}")
        storage = source.storage
        if size is None:
            if stride is not None or storage_offset:
                raise TypeError("set_(): storage_offset and stride need a size too")
            self._data, self._storage, self._base = source._data, storage, None
            self._bump_version()
            return self
    elif isinstance(source, Storage):
        storage = source
        if size is None:
            size = (storage.nbytes // self._dtype.itemsize,)
    else:
        raise TypeError(f"set_(): source must be a Tensor or a Storage, not {type(source).__name__}")
    if storage.device != self._device:
        raise RuntimeError(f"Expected a storage on device {self._device}, got one on {storage.device}")
    shape = _sizes((size,))
    strides = S.contiguous_strides(shape) if not stride else tuple(int(s) for s in stride)
    if len(strides) != len(shape):
        raise RuntimeError(f"set_(): {len(shape)} sizes and {len(strides)} strides")
    self._data = _geometry_from(self, storage, int(storage_offset) * self._dtype.itemsize, shape, strides)
    self._storage, self._base = storage, None
    self._bump_version()
    return self


install_methods(set_=set_)

"""Copies between tensors of any dtype and device: copy_, _to_copy, fill_, zero_, new_* (CompositeExplicitAutograd).

Note [Cross-device copies]
`copy_` and `_to_copy` are the only ops whose tensors may live on different devices (the dispatcher lets
them through: Operator.mixed_devices). Data moves with CuPy: host -> device by `cupy.asarray` under the
target device, device -> host by `.get()`, device -> device by `cupy.asarray` under the target device
(a peer copy). Every other op gets "expected all tensors to be on the same device".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime import strides as S
from runtime.cuda import require_device
from runtime.device import Device, as_device
from runtime.memory_overlap import check_write
from runtime.tensor import Tensor


def array_module(device: Device) -> Any:
    """NumPy for CPU, CuPy for CUDA (with a clear error when CuPy is missing)."""
    if device.type == "cpu":
        return np
    return require_device()


def move(data: Any, device: Device) -> Any:
    """`data` (a NumPy or CuPy array) as an array on `device`; no copy when it is there already."""
    on_cpu = data.__class__ is np.ndarray  # not an emulated device array (a NumPy subclass)
    if device.type == "cpu":
        return data if on_cpu else data.get()
    cp = array_module(device)
    index = device.index or 0
    if not on_cpu and data.device.id == index:
        return data
    with cp.cuda.Device(index):
        return cp.asarray(data)


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Write `src` into `self`, broadcasting `src` and converting its dtype and device."""
    if src is self:
        return self
    check_write(self, (src,))  # Note [Overlap checks before a write]
    data = src._data
    if data.shape != self._data.shape:
        S.expand(tuple(data.shape), src.stride(), tuple(self._data.shape))  # raises naming both shapes
    if src._device != self._device:
        data = move(data, self._device)
    if self._dtype is dtypes.bool_ and data.dtype != np.bool_:
        data = data != 0
    self._data[...] = data
    return self


def _to_copy(self: Tensor, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
             non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    """A copy of `self` with another dtype and/or device (what `Tensor.to` calls)."""
    dt = self._dtype if dtype is None else dtypes.as_dtype(dtype)
    dev = self._device if device is None else as_device(device)
    if dt.np is None:
        raise TypeError(f"{dt} is not supported by the {dev.type.upper()} backend of opgen")
    data = self._data
    if dev != self._device:
        data = move(data, dev)
    if data is self._data or data.dtype != dt.np:
        data = data.astype(dt.np, copy=True)  # to bool: `x != 0` (NaN is True), an array even for 0-d
    return Tensor._wrap(data, dt)


def fill_(self: Tensor, value: Any) -> Tensor:
    if hasattr(value, "_data"):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        value = value.item()
    self._data.fill(value)
    return self


def zero_(self: Tensor) -> Tensor:
    self._data.fill(0)
    return self


def _new(self: Tensor, size: Sequence[int] | int, dtype: Any, device: Any, fill: Any) -> Tensor:
    dt = self._dtype if dtype is None else dtypes.as_dtype(dtype)
    dev = self._device if device is None else as_device(device)
    shape = (size,) if isinstance(size, int) else tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    xp = array_module(dev)
    if xp is np:
        data = np.empty(shape, dt.np) if fill is None else np.full(shape, fill, dt.np)
    else:
        with xp.cuda.Device(dev.index or 0):
            data = xp.empty(shape, dt.np) if fill is None else xp.full(shape, fill, dt.np)
    return Tensor._wrap(data, dt)


def new_empty(self: Tensor, size: Sequence[int], dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None) -> Tensor:
    return _new(self, size, dtype, device, None)


def new_zeros(self: Tensor, size: Sequence[int], dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None) -> Tensor:
    return _new(self, size, dtype, device, 0)


def new_ones(self: Tensor, size: Sequence[int], dtype: Any = None, layout: Any = None, device: Any = None,
             pin_memory: Any = None) -> Tensor:
    return _new(self, size, dtype, device, 1)


def new_full(self: Tensor, size: Sequence[int], fill_value: Any, dtype: Any = None, layout: Any = None,
             device: Any = None, pin_memory: Any = None) -> Tensor:
    return _new(self, size, dtype, device, fill_value)

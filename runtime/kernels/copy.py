"""Copies between tensors of any dtype and device: copy_, _to_copy, fill_, zero_, new_* (CompositeExplicitAutograd).

Note [Cross-device copies]
`copy_` and `_to_copy` are the only ops whose tensors may live on different devices (the dispatcher lets
them through: Operator.mixed_devices). Data moves with CuPy: host -> device by `cupy.asarray` under the
target device, device -> host by `.get()`, device -> device by `cupy.asarray` under the target device
(a peer copy). Every other op gets "expected all tensors to be on the same device".

Note [bfloat16 on the CUDA backend]
NumPy and CuPy have no bfloat16, so a bfloat16 CUDA tensor's array holds the raw bits in uint16
(runtime/cuda/fixed.py: `storage_np`, the one map from a runtime dtype to its array dtype). The array
library must never compute on those bits: every conversion to or from bfloat16 (copies, casts, fills,
factories writing values) goes through the generated cast kernels (runtime/cuda/copy.py), which round to
nearest even as PyTorch does, and the generated pointwise, reduction, softmax and random kernels read and
write the bits as `bfloat16`. The CPU backend has no bfloat16 tensor at all: moving one to the CPU keeps
its values only in another dtype (`t.to("cpu", opgen.float32)`), and `numpy()`, DLPack and
`__cuda_array_interface__` refuse it (they would hand out the bits as uint16).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import cuda, dtypes
from runtime import strides as S
from runtime.device import Device, as_device
from runtime.kernels.checks import checked_fill_value
from runtime.kernels.dense_copy import dense_copy, is_dense
from runtime.memory_overlap import check_write
from runtime.meta_array import MetaArray, meta_array, no_data
from runtime.tensor import Tensor


def array_module(device: Device) -> Any:
    """NumPy for CPU, CuPy for CUDA (with a clear error when CuPy is missing)."""
    if device.type == "cpu":
        return np
    return cuda.require_device()


def move(data: Any, device: Device) -> Any:
    """`data` (a NumPy or CuPy array) as an array on `device`; no copy when it is there already."""
    on_cpu = data.__class__ is np.ndarray  # not an emulated device array (a NumPy subclass)
    if device.type == "meta" or data.__class__ is MetaArray:  # Note [Meta tensors] (runtime/meta_array.py)
        if device.type != "meta":
            no_data(f"copying a meta tensor to {device}")
        return meta_array(tuple(data.shape), S.contiguous_strides(tuple(data.shape)), data.dtype)
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
    if self._device.type == "meta":  # another device's src into a meta tensor: nothing to write
        from runtime.kernels import meta_copy
        return meta_copy.copy_(self, src)
    check_write(self, (src,))  # Note [Overlap checks before a write]
    if self._dtype.np is None or src._dtype.np is None:  # Note [bfloat16 on the CUDA backend]
        return _copy_bfloat16(self, src)
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
    if dev.type == "meta" or self._device.type == "meta":  # Note [Meta tensors] (runtime/meta_array.py)
        from runtime.kernels import meta_copy
        return meta_copy.to_copy(self, dt, layout, dev, pin_memory, non_blocking, memory_format)
    if dt.np is None or self._dtype.np is None:  # Note [bfloat16 on the CUDA backend]
        return _to_copy_bfloat16(self, dt, dev)
    data = self._data
    if dev != self._device:
        data = move(data, dev)
    if data is self._data or data.dtype != dt.np:
        # to bool: `x != 0` (NaN is True), an array even for 0-d. The copy keeps a dense layout (a transposed
        # tensor stays transposed) and lays any other out densely in its dims' order, as PyTorch's
        # preserve_format copy does
        if data.flags.c_contiguous or is_dense(data):
            data = data.astype(dt.np, copy=True)
        else:
            data = dense_copy(data, dt.np, array_module(dev))
    return Tensor._wrap(data, dt)


def _check_bfloat16_device(dt: dtypes.DType, dev: Device) -> None:
    if dt.np is None and dev.type != "cuda":
        raise TypeError(f"{dt} is not supported by the {dev.type.upper()} backend of opgen (NumPy has no such "
                        f"type; the CUDA backend has it)")


def _copy_bfloat16(self: Tensor, src: Tensor) -> Tensor:
    """copy_ where either side is bfloat16 (a CUDA tensor): the cast happens in a kernel on the device."""
    from runtime.cuda import copy as CC

    if self._device.type == "cuda":
        return CC.copy_(self, src)  # src from any device, converted by the kernel
    converted = CC.to_dtype(src, self._dtype)  # a bfloat16 CUDA src into a CPU tensor: cast there, then move
    if converted._data.shape != self._data.shape:
        S.expand(tuple(converted._data.shape), converted.stride(), tuple(self._data.shape))
    self._data[...] = move(converted._data, self._device)
    return self


def _to_copy_bfloat16(self: Tensor, dt: dtypes.DType, dev: Device) -> Tensor:
    """_to_copy from or to bfloat16: cast on the CUDA side (where the bits can live), move the result."""
    from runtime.cuda import copy as CC

    _check_bfloat16_device(dt, dev)
    if self._device.type == "cuda":
        converted = CC.to_dtype(self, dt)
        return Tensor._wrap(move(converted._data, dev), dt)
    return CC.to_dtype(Tensor._wrap(move(self._data, dev), self._dtype), dt)


def store(t: Tensor, values: Any) -> None:
    """Write an array of values (broadcastable to `t`, on its device) into `t`, converted to its dtype."""
    if t._dtype.np is None:  # Note [bfloat16 on the CUDA backend]: the cast kernel rounds
        from runtime.cuda.copy import copy_array

        copy_array(t._data, t._dtype, values, dtypes.from_numpy(values.dtype))
    else:
        t._data[...] = values


def fill_(self: Tensor, value: Any) -> Tensor:
    if self._dtype.np is None:  # Note [bfloat16 on the CUDA backend]
        from runtime.cuda import copy as CC

        return CC.fill_(self, value)
    if hasattr(value, "_data"):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        value = value.item()
    value = checked_fill_value(self._dtype, value)
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
    if fill is not None:
        fill = checked_fill_value(dt, fill)
    if dt.np is None:  # Note [bfloat16 on the CUDA backend]
        _check_bfloat16_device(dt, dev)
        from runtime.cuda import fixed as F

        with xp.cuda.Device(dev.index or 0):
            t = Tensor._wrap(F.empty(shape, dt, dev.index or 0), dt)
        return t if fill is None else fill_(t, fill)
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

"""Tensor factories: tensor, empty, zeros, ones, full ... (NumPy on CPU, CuPy on CUDA)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime.device import CPU, Device, as_device
from runtime.tensor import Tensor


def array_module(device: Device) -> Any:
    """NumPy for CPU, CuPy for CUDA (with a clear error when CuPy is missing)."""
    if device.type == "cpu":
        return np
    from runtime.cuda import require_cupy
    return require_cupy()


def _device(device: Any) -> Device:
    return CPU if device is None else as_device(device)


def _size(size: Sequence[Any]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], list | tuple):
        size = size[0]
    out = tuple(int(s) for s in size)
    if any(s < 0 for s in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(out)}")
    return out


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_() if requires_grad else t


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays or tensors)."""
    if isinstance(data, Tensor):
        data = data.numpy(force=True)
    dt = dtypes.as_dtype(dtype) if dtype is not None else _infer_dtype(data)
    array = np.array(data, dtype=dt.np, copy=True)
    return _finish(_to_device(array, _device(device), dt), requires_grad)


def _infer_dtype(data: Any) -> dtypes.DType:
    if isinstance(data, np.ndarray | np.generic):
        return dtypes.from_numpy(data.dtype)
    kind = np.asarray(data).dtype.kind
    if kind == "b":
        return dtypes.bool_
    if kind in "iu":
        return dtypes.int64
    if kind == "f":
        return dtypes.get_default_dtype()
    raise TypeError(f"can't build a tensor from data of type {type(data).__name__}")


def _to_device(array: np.ndarray, device: Device, dt: dtypes.DType) -> Tensor:
    if device.type == "cpu":
        return Tensor._wrap(array, dt)
    xp = array_module(device)
    with xp.cuda.Device(device.index or 0):
        return Tensor._wrap(xp.asarray(array), dt)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    dev = _device(device)
    xp = array_module(dev)
    return _finish(Tensor._wrap(xp.empty(_size(size), dtype=dt.np), dt), requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dt = dtypes.result_type(fill_value) if not isinstance(fill_value, float) else dtypes.get_default_dtype()
    else:
        dt = dtypes.as_dtype(dtype)
    dev = _device(device)
    xp = array_module(dev)
    return _finish(Tensor._wrap(xp.full(_size((size,)), fill_value, dtype=dt.np), dt), requires_grad)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return full(_size(size), 0, dtype=dtype or dtypes.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return full(_size(size), 1, dtype=dtype or dtypes.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def zeros_like(t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return zeros(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def ones_like(t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return ones(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def full_like(t: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device,
                requires_grad=requires_grad)


def empty_like(t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return empty(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with a NumPy array."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return Tensor._wrap(array, dtypes.from_numpy(array.dtype))


def scalar_tensor(value: Any, like: Tensor | None = None) -> Tensor:
    """A 0-d "wrapped number" tensor: it promotes like a Python scalar and takes no part in dispatch."""
    dt = dtypes.result_type(value)
    t = Tensor._wrap(np.array(value, dtype=dt.np), dt)
    t._wrapped = True
    t._keys = 0
    return t

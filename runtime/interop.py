"""Interop: `Tensor.to`, DLPack in both directions, and the NumPy/CuPy bridges.

Note [Zero-copy interop]
A CPU tensor's data is a NumPy array over its storage (Note [Tensor data is a strided array view]),
so `from_numpy`, `.numpy()` and `__array__` share memory with no copy at all. DLPack goes through the
array module too: `Tensor.__dlpack__` is the `__dlpack__` of that array (NumPy's on CPU, CuPy's on
CUDA), and `from_dlpack(x)` asks NumPy or CuPy, chosen from `x.__dlpack_device__()`, to import `x`,
then wraps the array. Either way the consumer sees the producer's pointer; tests check it by address.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import cuda, dtypes, opcall
from runtime.device import Device, as_device
from runtime.factories import tensor
from runtime.tensor import Tensor, install_methods

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13


def _parse_to(self: Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, bool, bool]:
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    non_blocking = bool(kwargs.pop("non_blocking", False))
    copy = bool(kwargs.pop("copy", False))
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments: {', '.join(kwargs)}")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        dtype, device = other.dtype, other.device
    elif rest and (isinstance(rest[0], str | Device) or (isinstance(rest[0], int) and not isinstance(rest[0], bool))):
        try:
            device = as_device(rest[0])
            rest.pop(0)
        except (RuntimeError, TypeError):
            if isinstance(rest[0], str) and not _is_dtype_name(rest[0]):
                raise  # neither a device nor a dtype: PyTorch reads a string as a device

    if rest and not isinstance(rest[0], bool):
        dtype = rest.pop(0)
    if rest:
        non_blocking = bool(rest.pop(0))
    if rest:
        copy = bool(rest.pop(0))
    if rest:
        raise TypeError(f"to() received too many arguments: {args!r}")
    return dtype, device, non_blocking, copy


def _is_dtype_name(name: str) -> bool:
    try:
        dtypes.as_dtype(name)
    except (TypeError, ValueError, KeyError):
        return False
    return True


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.to: `to(dtype)`, `to(device)`, `to(device, dtype)`, `to(other)`, keywords `dtype=`, `device=`,
    `copy=`. Returns `self` when dtype and device already match (unless copy=True), as PyTorch does, else
    `_to_copy`."""
    dtype, device, non_blocking, copy = _parse_to(self, args, kwargs)
    dt = None if dtype is None else dtypes.as_dtype(dtype)
    dev = None if device is None else as_device(device)
    same_dtype = dt is None or dt is self._dtype
    same_device = dev is None or dev == self._device
    if same_dtype and same_device and not copy:
        return self
    return opcall.ops._to_copy(self, dtype=dt, device=dev, non_blocking=non_blocking)


# -- DLPack -----------------------------------------------------------------------------------------------
def dlpack_device(t: Tensor) -> tuple[int, int]:
    if t._device.type == "cpu":
        return (KDL_CPU, 0)
    return (KDL_CUDA, int(t._device.index or 0))


def to_dlpack(t: Tensor, stream: Any = None, **kwargs: Any) -> Any:
    """The DLPack capsule of a tensor's data (no copy); tensors that require grad are refused, as in PyTorch."""
    if t._requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    if t._dtype.np is None:  # the array's DLPack type would be uint16 (Note [bfloat16 on the CUDA backend])
        raise TypeError(f"__dlpack__ of a {t._dtype} tensor is not supported by opgen: its array holds the bits "
                        "as uint16 and would be exported as such; convert it first, e.g. tensor.float()")
    given = {k: v for k, v in kwargs.items() if v is not None}
    if t._device.type == "cpu":
        if stream is not None:
            raise RuntimeError("a CPU tensor takes no stream in __dlpack__")
        return t._data.__dlpack__(**given)
    return t._data.__dlpack__(stream=stream, **given)


class _Capsule:
    """Lets NumPy/CuPy import a bare DLPack capsule (the old protocol) whose device we are told."""

    def __init__(self, capsule: Any, device: tuple[int, int]) -> None:
        self.capsule = capsule
        self.device = device

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


def from_dlpack(ext: Any) -> Tensor:
    """A tensor over the memory of any DLPack producer (NumPy, CuPy, PyTorch, JAX ...), without a copy."""
    if isinstance(ext, Tensor):
        return ext
    if hasattr(ext, "__dlpack_device__"):
        kind, index = (int(v) for v in ext.__dlpack_device__())
    elif type(ext).__name__ == "PyCapsule":
        kind, index = KDL_CPU, 0
        ext = _Capsule(ext, (kind, index))
    else:
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ and __dlpack_device__ or a DLPack "
                        f"capsule, got {type(ext).__name__}")
    if kind == KDL_CPU:
        array = np.from_dlpack(ext)
    elif kind in (KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED):
        cp = cuda.require_cupy()
        with cp.cuda.Device(index):
            array = cp.from_dlpack(ext)
    else:
        raise RuntimeError(f"from_dlpack: unsupported DLPack device type {kind} (opgen takes CPU and CUDA)")
    return Tensor._wrap(array, dtypes.from_numpy(array.dtype))


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Share memory when `data` is already an array of the right dtype and device, else copy (torch.as_tensor)."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray):
        if data.__class__ is not np.ndarray:
            data = data.view(np.ndarray)  # np.memmap, np.matrix: _wrap tells NumPy from CuPy by exact class
        t = Tensor._wrap(data, dtypes.from_numpy(data.dtype))
        return t.to(dtype=dtype, device=device)
    if hasattr(data, "__cuda_array_interface__") or hasattr(data, "__dlpack_device__"):
        return from_dlpack(data).to(dtype=dtype, device=device)
    return tensor(data, dtype=dtype, device=device)


# Note [Tensor methods from upper layers] (runtime/tensor.py)
install_methods(to=to, __dlpack__=to_dlpack, __dlpack_device__=dlpack_device)

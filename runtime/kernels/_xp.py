"""The array module (NumPy on CPU, CuPy on CUDA) of a tensor's data, and small xp-generic helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime import strides as S
from runtime.cuda.fixed import storage_np
from runtime.device import CPU
from runtime.dispatcher import CPU_BIT
from runtime.tensor import Tensor, fresh_tensor


def xp_of(array: Any) -> Any:
    """`numpy` for a NumPy array, `cupy` for a CuPy array (imported only then); an emulated CUDA array (a
    NumPy subclass, runtime/cuda/emulator/xp.py) gets the emulated device's module."""
    if array.__class__ is np.ndarray or isinstance(array, np.generic):
        return np
    from runtime.cuda import require_cupy
    return require_cupy()


def wrap(result: Any, like: Any, dtype: dtypes.DType) -> Tensor:
    """A result (maybe a NumPy scalar) as a tensor of `dtype` with the array type of `like`."""
    if result.__class__ is not np.ndarray:  # a NumPy scalar from a 0-d result, or a CuPy array
        result = np.asarray(result) if like.__class__ is np.ndarray else xp_of(like).asarray(result)
    if result.dtype is not dtype.np and result.dtype != dtype.np:
        result = result.astype(storage_np(dtype))  # bfloat16: its bits, uint16 (Note [Composite kernels and bfloat16])
    return fresh_tensor(result, dtype, CPU, CPU_BIT) if result.__class__ is np.ndarray else Tensor._wrap(result, dtype)


def dims(dim: int | Sequence[int] | None, ndim: int) -> tuple[int, ...] | None:
    """Reduction dims as a tuple of non-negative axes; None (or []) means all."""
    if dim is None:
        return None
    if dim.__class__ is int and -ndim <= dim < ndim:  # the common case, already valid
        return (dim + ndim if dim < 0 else dim,)
    ds = (dim,) if isinstance(dim, int) else tuple(dim)
    if not ds:
        return None
    if len(ds) == 1:  # the common case, without the duplicate check
        d = S.wrap_dim(ds[0], ndim)
        return (d,) if ndim else None  # a 0-d tensor reduces over "dim 0" (or -1) as over everything
    wrapped = tuple([S.wrap_dim(d, ndim) for d in ds])
    if len(set(wrapped)) != len(wrapped):  # a 0-d tensor's 0 and -1 are one dim, too (as PyTorch)
        seen: set[int] = set()
        for d in wrapped:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
    return wrapped if ndim else None


def result_type(*args: Any) -> dtypes.DType:
    """PyTorch's result type of tensors (wrapped numbers count as Python scalars) and Python numbers."""
    return dtypes.result_type(*(wrapped_value(a) if isinstance(a, Tensor) and a._wrapped else a for a in args))


# a Python number of each kind, standing for a wrapped number on device 'meta', whose value is not kept
_KIND_VALUE = {"bool": False, "int": 0, "float": 0.0}


def wrapped_value(t: Tensor) -> Any:
    """The Python number a wrapped-number tensor came from (one of its kind, for a meta tensor: promotion
    reads only the kind of a wrapped number, Note [Meta tensors] in runtime/meta_array.py)."""
    if t._device.type == "meta":
        dt = t._dtype
        return _KIND_VALUE["bool" if dt is dtypes.bool_ else "float" if dt.is_floating_point else "int"]
    return t._data.item()


def scatter_add_at(xp: Any, target: Any, index: tuple[Any, ...], values: Any) -> None:
    """`target[index] += values` with repeated indices accumulated (np.add.at / cupyx.scatter_add)."""
    if isinstance(target, np.ndarray):  # NumPy, or an emulated CUDA array (a NumPy subclass)
        np.add.at(target, index, values)
    else:
        import cupyx
        cupyx.scatter_add(target, index, values)


def as_tuple(v: int | Sequence[int], n: int) -> tuple[int, ...]:
    """An int or a list (of 1 or n ints) as an n-tuple, as PyTorch's int[n] arguments."""
    if isinstance(v, int):
        return (v,) * n
    t = tuple(int(x) for x in v)
    return t * n if len(t) == 1 else t


def strided_view(a: Any, shape: Sequence[int], byte_strides: Sequence[int]) -> Any:
    """A read-only strided view of array `a` (NumPy, an emulated CUDA array, or CuPy); the caller keeps it
    inside `a`'s memory."""
    if isinstance(a, np.ndarray):  # subok: an emulated CUDA array stays one
        return np.lib.stride_tricks.as_strided(a, tuple(shape), tuple(byte_strides), subok=True, writeable=False)
    return xp_of(a).lib.stride_tricks.as_strided(a, tuple(shape), tuple(byte_strides))

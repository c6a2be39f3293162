"""Meta kernels of copies, fills, the random in-place fills, `new_*`, `clone` and the backward ops of views
(Note [Meta tensors] in runtime/meta_array.py). A copy to device 'meta' keeps the source's layout when it
is dense (PyTorch's `preserve_format`); a copy from a meta tensor to a device with data has nothing to
copy and raises MetaDataError.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import dtypes
from runtime import strides as S
from runtime.device import as_device
from runtime.kernels.checks import checked_fill_value
from runtime.kernels.dense_copy import clone_strides
from runtime.kernels.meta_pointwise import empty
from runtime.meta_array import no_data
from runtime.tensor import Tensor


def _preserved_strides(t: Tensor) -> tuple[int, ...] | None:
    """`t`'s strides when they are dense and non-overlapping (kept by a copy), else dense strides in the
    order of its dims in memory (`S.dense_strides_like`, PyTorch's preserve_format)."""
    shape, strides = tuple(t._data.shape), t.stride()
    order = sorted(range(len(shape)), key=lambda d: (strides[d], -d))
    expected = 1
    for d in order:
        if shape[d] != 1 and strides[d] != expected:
            return S.dense_strides_like(shape, strides)
        expected *= shape[d]
    return strides


def like(t: Tensor, dt: dtypes.DType | None = None) -> Tensor:
    """A meta tensor of `t`'s shape (and layout, when dense), in `dt` (default `t`'s dtype)."""
    return empty(tuple(t._data.shape), t._dtype if dt is None else dt, _preserved_strides(t))


def to_copy(self: Tensor, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
            non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    dt = self._dtype if dtype is None else dtypes.as_dtype(dtype)
    dev = self._device if device is None else as_device(device)
    if dev.type != "meta":
        no_data(f"copying a meta tensor to {dev}")
    return like(self, dt)


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    if self._device.type != "meta":
        no_data(f"copying a meta tensor into a {self._device} tensor")
    shape = tuple(src._data.shape)
    if shape != tuple(self._data.shape):
        S.expand(shape, src.stride(), tuple(self._data.shape))  # raises naming both shapes
    return self


def fill_(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.dim()} dimensions.")
    else:
        checked_fill_value(self._dtype, value)
    return self


def zero_(self: Tensor) -> Tensor:
    return self


def _new(self: Tensor, size: Sequence[int] | int, dtype: Any, device: Any, fill: Any) -> Tensor:
    dt = self._dtype if dtype is None else dtypes.as_dtype(dtype)
    dev = self._device if device is None else as_device(device)
    if dev.type != "meta":  # a tensor with data, made by the ops of that device
        from runtime.opcall import api

        shape = (size,) if isinstance(size, int) else tuple(size)
        if fill is None:
            return api.empty(shape, dtype=dt, device=dev)
        return api.full(shape, fill, dtype=dt, device=dev)
    shape = (size,) if isinstance(size, int) else tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    if fill is not None:
        checked_fill_value(dt, fill)
    return empty(shape, dt)


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


def clone(self: Tensor, memory_format: object = None) -> Tensor:
    """Laid out as the CPU kernel's copy (runtime/kernels/views.py): `dense_copy.clone_strides`."""
    return empty(tuple(self._data.shape), self._dtype, clone_strides("clone", self._data, memory_format))


# -- random fills: the tensor keeps its geometry; nothing is drawn (the generator does not advance) -----
def _floating(self: Tensor, op: str) -> Tensor:
    if not self._dtype.is_floating_point:
        raise NotImplementedError(f"\"{op}\" not implemented for '{self._dtype.name}'")
    return self


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, generator: Any = None) -> Tensor:
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    return _floating(self, "uniform_")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _floating(self, "normal_")


def random_(self: Tensor, from_: int = 0, to: int | None = None, generator: Any = None) -> Tensor:
    return self


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, generator: Any = None) -> Tensor:
    return _floating(self, "cauchy_")


def exponential_(self: Tensor, lambd: float = 1.0, generator: Any = None) -> Tensor:
    return _floating(self, "exponential_")


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, generator: Any = None) -> Tensor:
    return _floating(self, "log_normal_")


def geometric_(self: Tensor, p: float, generator: Any = None) -> Tensor:
    if self._dtype is dtypes.bool_:
        raise NotImplementedError("\"geometric_\" not implemented for 'Bool'")
    return self


def bernoulli__float(self: Tensor, p: float = 0.5, generator: Any = None) -> Tensor:
    return self


def bernoulli__Tensor(self: Tensor, p: Tensor, generator: Any = None) -> Tensor:
    S.broadcast_shapes(tuple(p._data.shape), tuple(self._data.shape))
    return self


# -- backward ops of views: a gradient of the input's sizes ------------------------------------------
def select_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, index: int) -> Tensor:
    return empty(tuple(input_sizes), grad_output._dtype)


def slice_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, start: int | None,
                   end: int | None, step: int) -> Tensor:
    return empty(tuple(input_sizes), grad_output._dtype)


def diagonal_backward(grad_output: Tensor, input_sizes: Sequence[int], offset: int, dim1: int,
                      dim2: int) -> Tensor:
    return empty(tuple(input_sizes), grad_output._dtype)


def as_strided_backward(grad: Tensor, input_sizes: Sequence[int], input_strides: Sequence[int],
                        input_storage_offset: int, size: Sequence[int], stride: Sequence[int],
                        storage_offset: int | None = None) -> Tensor:
    return empty(tuple(input_sizes), grad._dtype)



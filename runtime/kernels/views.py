"""View kernels: new tensors over the same memory, never a copy (CompositeExplicitAutograd: CPU and CUDA).

Geometry comes from the pure functions of runtime/strides.py; the array view is then made with the
array module's own view operations (NumPy or CuPy), see Note [Tensor data is a strided array view].
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import strides as S
from runtime.kernels.dense_copy import clone_strides, copy_with_strides
from runtime.tensor import Tensor

_py_slice = slice  # the builtin: this module defines the `slice` view op
_ndarray = np.ndarray


def _as_strided(self: Tensor, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> Tensor:
    """A view of `self` with element `strides`, starting `offset` elements after `self`'s first element."""
    data = self._data
    item = self._dtype.itemsize
    if offset:
        data = data.reshape(-1)[offset:] if data.flags.c_contiguous else _shifted(data, offset)
    return self._view(_strided(data, tuple(shape), tuple([s * item for s in strides])))


def _strided(data: Any, shape: tuple[int, ...], byte_strides: tuple[int, ...]) -> Any:
    """An array view of `shape` and `byte_strides` starting at `data`'s first element."""
    if isinstance(data, np.ndarray):
        array = _buffer_view(data, shape, byte_strides) if data.__class__ is np.ndarray else None
        if array is None:
            array = np.lib.stride_tricks.as_strided(data, shape, byte_strides,  # subok: an emulated
                                                    writeable=data.flags.writeable, subok=True)  # CUDA array
        return array
    import cupy
    return cupy.lib.stride_tricks.as_strided(data, shape, byte_strides)


def strided_view(data: Any, shape: tuple[int, ...], byte_strides: tuple[int, ...]) -> Any:
    """An array view of `shape` and `byte_strides` starting at `data`'s first element (NumPy or CuPy)."""
    return _strided(data, shape, byte_strides)


def _buffer_view(data: np.ndarray, shape: tuple[int, ...], byte_strides: tuple[int, ...]) -> np.ndarray | None:
    """A view over `data`'s own buffer, 4x faster than as_strided; None when NumPy refuses it (`data` not
    contiguous, or the view reaching outside it), and as_strided must do it."""
    try:
        return np.ndarray(shape, data.dtype, data, 0, byte_strides)
    except (BufferError, TypeError, ValueError):
        return None


def _shifted(data: object, offset: int) -> object:
    # A 1-element-wide window starting `offset` elements later, built with a strided view.
    flat_strides = (data.itemsize,)  # type: ignore[attr-defined]
    if isinstance(data, np.ndarray):
        base = np.lib.stride_tricks.as_strided(data, (offset + 1,), flat_strides, subok=True)
    else:
        import cupy
        base = cupy.lib.stride_tricks.as_strided(data, (offset + 1,), flat_strides)
    return base[offset:]


def t(self: Tensor) -> Tensor:
    if self._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D")
    return self._view(self._data.T)


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    data = self._data
    if dim0.__class__ is int and dim1.__class__ is int:  # Note [View fast paths]
        try:
            return self._view(data.swapaxes(dim0, dim1))
        except (ValueError, IndexError):  # an AxisError: a dim out of range, or a 0-d tensor
            pass
    n = data.ndim
    d0, d1 = S.wrap_dim(dim0, n), S.wrap_dim(dim1, n)
    if n == 0:  # a 0-d tensor takes dims 0 and -1 (as PyTorch): itself
        return self._view(data[...])
    perm = list(range(n))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return self._view(data.transpose(perm))


# Note [View fast paths]
# The array module computes the common views itself, in C: a permutation is `transpose`, a swap of two
# dims `swapaxes`, a dropped size-1 dim is an index with 0, and a view or a new size-1 dim of a non-empty
# C-contiguous array is `reshape` (which never copies such an array, and gives PyTorch's contiguous
# strides); an expand that adds no dim keeps the array's byte strides and zeroes the stretched ones. These
# kernels take that path when the arguments are plainly valid (or the array module itself refuses them)
# and leave everything else to the geometry of runtime/strides.py, whose checks raise PyTorch's errors;
# both give the same sizes and strides.
def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    data = self._data
    if dims is not None:  # NumPy's transpose(None) would reverse the dims
        try:  # NumPy checks the permutation (length, range, repeats) and wraps negative dims, as PyTorch
            array = data.transpose(dims)
        except (TypeError, ValueError, IndexError):
            pass
        else:
            return self._view(array)
    n = data.ndim
    dims = int_list(dims, "permute", "dims")
    perm = [d + n if d < 0 else d for d in dims]
    if sorted(perm) != list(range(n)):
        S.permute(data.shape, self.stride(), dims)  # raises PyTorch's error
    return self._view(data.transpose(perm))


def expand(self: Tensor, size: Sequence[int], implicit: bool = False) -> Tensor:
    data = self._data
    shape = data.shape
    if size.__class__ is tuple and len(size) == len(shape):  # no new dims: strides of data's own
        byte_strides = list(data.strides)
        for d, n in enumerate(size):
            if n.__class__ is not int:
                break  # not plainly valid: the general path below says what is wrong
            if n != shape[d] and n != -1:
                if shape[d] != 1 or n < 0:
                    break
                byte_strides[d] = 0  # a stretched size-1 dim
        else:
            if -1 in size:
                size = tuple([s if n == -1 else n for n, s in zip(size, shape, strict=True)])
            if data.__class__ is _ndarray:  # _buffer_view's constructor, without its two frames
                try:
                    return self._view(_ndarray(size, data.dtype, data, 0, tuple(byte_strides)))
                except (BufferError, TypeError, ValueError):
                    pass
            return self._view(_strided(data, size, tuple(byte_strides)))
    shape, strides = S.expand(self.shape, self.stride(), int_list(size, "expand"))
    return _as_strided(self, shape, strides)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    data = self._data
    n = data.ndim
    if dim.__class__ is int and -n - 1 <= dim <= n and data.flags.c_contiguous and data.size:
        shape = data.shape
        if dim == 0:
            return self._view(data.reshape((1,) + shape))
        if dim < 0:
            dim += n + 1
        return self._view(data.reshape(shape[:dim] + (1,) + shape[dim:]))
    shape, strides = S.unsqueeze(self.shape, self.stride(), dim)
    return _as_strided(self, shape, strides)


def squeeze_dim(self: Tensor, dim: int) -> Tensor:
    data = self._data
    n = data.ndim
    if dim.__class__ is int and -n <= dim < n:
        if dim < 0:
            dim += n
        return self._view(data[(_py_slice(None),) * dim + (0, Ellipsis)] if data.shape[dim] == 1 else data[...])
    shape, strides = S.squeeze(self.shape, self.stride(), dim)
    return _as_strided(self, shape, strides)


def squeeze(self: Tensor) -> Tensor:
    return self._view(self._data.squeeze())


class NotViewable(RuntimeError):
    """`view` refused sizes that the input's strides cannot express without a copy (PyTorch's RuntimeError):
    `reshape` and `flatten` try `view` first and copy on this error."""


def view(self: Tensor, size: Sequence[int]) -> Tensor:
    data = self._data
    if data.flags.c_contiguous and data.size:
        try:
            array = data.reshape(size)
        except (TypeError, ValueError):
            pass  # the general path below says what is wrong, as PyTorch does
        else:  # NumPy reads any negative size as -1: only a shape without one is taken on sight
            if (size >= -1) if size.__class__ is int else (array.shape == size or min(size, default=0) >= -1):
                return self._view(array)
    shape = S.infer_size(int_list(size, "view"), self.numel())
    strides = S.view_strides(self.shape, self.stride(), shape)
    if strides is None:
        raise NotViewable("view size is not compatible with input tensor's size and stride (at least one "
                          "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _as_strided(self, shape, strides)


def clone(self: Tensor, memory_format: object = None) -> Tensor:
    """A copy laid out in `memory_format`: by default (preserve_format) as `self` when it is dense, else as
    PyTorch lays out an elementwise result of it; `contiguous_format` row-major."""
    a = self._data
    return Tensor._wrap(copy_with_strides(a, clone_strides("clone", a, memory_format)), self._dtype)


def int_list(size: Any, op: str = "", arg: str = "size") -> tuple[int, ...]:
    """An int-list argument as a tuple (`view(6)` and `view((2, 3))` both work). As PyTorch, an element that
    is not an integer (a float, a bool, None) is a TypeError naming `op` and `arg`; integer-like objects
    (NumPy integers, one-element integer tensors) are read with `__index__`."""
    if size.__class__ is int:
        return (size,)
    where = f"{op}(): argument '{arg}'" if op else f"argument '{arg}'"
    if not isinstance(size, list | tuple):
        try:
            return (_index(size, where, None),)
        except TypeError:
            raise TypeError(f"{where} must be tuple of ints, not {type(size).__name__}") from None
    return tuple([_index(v, where, i) for i, v in enumerate(size)])


def _index(value: Any, where: str, pos: int | None) -> int:
    if value.__class__ is int:
        return value
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{where} must be tuple of ints, but found element of type {type(value).__name__}"
                    + ("" if pos is None else f" at pos {pos}"))


def select(self: Tensor, dim: int, index: int) -> Tensor:
    data = self._data
    if data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    if dim != 0 and not 0 < dim < data.ndim:
        dim = S.wrap_dim(dim, data.ndim)
    size = data.shape[dim]
    if index.__class__ is not int:
        index = int(index)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    # the trailing Ellipsis makes NumPy/CuPy return a 0-d array view, never a scalar
    return self._view(data[(index, Ellipsis) if dim == 0 else (_py_slice(None),) * dim + (index, Ellipsis)])


def slice(self: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
          step: int = 1) -> Tensor:
    data = self._data
    if data.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise ValueError("step must be greater than zero")
    if dim != 0 and not 0 < dim < data.ndim:
        dim = S.wrap_dim(dim, data.ndim)
    item = _py_slice(start, end, step)
    return self._view(data[(item, Ellipsis) if dim == 0 else (_py_slice(None),) * dim + (item, Ellipsis)])


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    shape, strides, start = S.diagonal(self.shape, self.stride(), 0, offset, dim1, dim2)
    return _as_strided(self, shape, strides, start)


def as_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """A view of this tensor's storage with any geometry; `storage_offset` counts from the storage's start."""
    shape, strides = int_list(size, "as_strided"), int_list(stride, "as_strided", "stride")
    if len(shape) != len(strides):
        raise RuntimeError(f"mismatch in length of strides and shape: shape {list(shape)} has {len(shape)} "
                           f"dims, strides {list(strides)} has {len(strides)}")
    if any(s < 0 for s in shape) or any(s < 0 for s in strides):
        raise RuntimeError(f"as_strided: negative sizes or strides are not supported, got size "
                           f"{list(shape)} and stride {list(strides)}")
    storage = self.storage
    item = self._dtype.itemsize
    offset = self.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"as_strided: negative storage offset {offset}")
    capacity = storage.nbytes // item
    needed = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    if needed > capacity:
        raise RuntimeError(f"setStorage: sizes {list(shape)}, strides {list(strides)}, storage offset {offset}, "
                           f"and itemsize {item} requiring a storage size of {needed * item} are out of bounds "
                           f"for storage of size {capacity * item}")
    root = storage.data
    if root.dtype == self._data.dtype and root.flags.c_contiguous:
        flat = root.reshape(-1)[offset:]
        byte_strides = tuple(s * item for s in strides)
        if isinstance(flat, np.ndarray):
            array = np.lib.stride_tricks.as_strided(flat, shape, byte_strides, writeable=flat.flags.writeable,
                                                    subok=True)
        else:
            import cupy
            array = cupy.lib.stride_tricks.as_strided(flat, shape, byte_strides)
        return self._view(array)
    relative = offset - self.storage_offset()
    if relative < 0:
        raise RuntimeError("as_strided: an offset before this tensor's first element needs a contiguous storage")
    return _as_strided(self, shape, strides, relative)


def _xp(t: Tensor) -> Any:
    if t._device.type == "cpu":
        return np
    from runtime.cuda import require_cupy
    return require_cupy()


def _zeros_like_sizes(grad: Tensor, sizes: Sequence[int]) -> Tensor:
    xp = _xp(grad)
    if grad._device.type == "cpu":
        return Tensor._wrap(np.zeros(int_list(sizes), dtype=grad._data.dtype), grad._dtype)
    with xp.cuda.Device(grad._device.index or 0):
        return Tensor._wrap(xp.zeros(int_list(sizes), dtype=grad._data.dtype), grad._dtype)


def select_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, index: int) -> Tensor:
    out = _zeros_like_sizes(grad_output, input_sizes)
    select(out, dim, index)._data[...] = grad_output._data
    return out


def slice_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, start: int | None,
                   end: int | None, step: int) -> Tensor:
    out = _zeros_like_sizes(grad_output, input_sizes)
    slice(out, dim, start, end, step)._data[...] = grad_output._data
    return out


def diagonal_backward(grad_output: Tensor, input_sizes: Sequence[int], offset: int, dim1: int,
                      dim2: int) -> Tensor:
    out = _zeros_like_sizes(grad_output, input_sizes)
    diagonal(out, offset, dim1, dim2)._data[...] = grad_output._data
    return out


def _positions(xp: Any, shape: Sequence[int], strides: Sequence[int], offset: int) -> Any:
    """The storage position of every element of a strided geometry, as an array of `shape`."""
    pos = xp.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        axis = [1] * len(shape)
        axis[d] = n
        pos = pos + xp.arange(n, dtype=np.int64).reshape(axis) * s
    return pos


def as_strided_backward(grad: Tensor, input_sizes: Sequence[int], input_strides: Sequence[int],
                        input_offset: int, size: Sequence[int], stride: Sequence[int],
                        storage_offset: int | None = None) -> Tensor:
    """Scatter-add the output gradient into storage positions, then gather the input's positions."""
    xp = _xp(grad)
    offset = input_offset if storage_offset is None else storage_offset
    out_pos = _positions(xp, int_list(size), int_list(stride), offset)
    in_pos = _positions(xp, int_list(input_sizes), int_list(input_strides), input_offset)
    length = int(max(int(out_pos.max()) if out_pos.size else 0, int(in_pos.max()) if in_pos.size else 0)) + 1
    buf = xp.zeros(length, dtype=grad._data.dtype)
    if isinstance(buf, np.ndarray):  # NumPy, or an emulated CUDA array (a NumPy subclass)
        np.add.at(buf, out_pos.reshape(-1), grad._data.reshape(-1))
    else:
        import cupyx
        cupyx.scatter_add(buf, out_pos.reshape(-1), grad._data.reshape(-1))
    # through a flat index: a 0-d input's position would pick a scalar, not an array
    return Tensor._wrap(buf[in_pos.reshape(-1)].reshape(in_pos.shape), grad._dtype)

"""Tensor factories: tensor, empty, zeros, ones, full, eye, rand, randn, randint, *_like (arange and linspace:
runtime/ranges.py).

Note [Factories go through BackendSelect]
A factory takes no tensor, so no tensor argument can say which backend should run it. As in PyTorch,
the allocation is the operator `empty_strided` whose BackendSelect kernel (BackendSelect is in every
thread's include set) reads `device=` and re-dispatches to the CPU or CUDA kernel. The public factories
here (which take PyTorch's varargs sizes, `G.zeros(2, 3)`) allocate through it and then fill the
memory with the dispatched in-place ops (`fill_`, `uniform_` ...), so a kernel registered at run time
for CPU or CUDA (runtime.library) serves every factory.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes, opcall
from runtime import strides as S
from runtime.cuda.fixed import storage_np
from runtime.device import CPU, META, Device, as_device, default_device
from runtime.dispatcher import BACKEND_SELECT_BIT, CPU_BIT, CUDA_BIT, META_BIT, OP_TABLES, dispatch_key, dispatcher
from runtime.kernels.checks import checked_fill_value
from runtime.kernels.copy import array_module, fill_, move, store, zero_
from runtime.kernels.dense_copy import clone_strides, copy_with_strides
from runtime.meta_array import meta_array
from runtime.storage import MAX_DIMS, empty_array
from runtime.tensor import Size, Tensor, fresh_tensor, install_methods

__all__ = [
    "empty", "empty_like", "eye", "from_numpy", "full", "full_like", "ones", "ones_like",
    "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "scalar_tensor", "tensor", "zeros",
    "zeros_like", "array_module",
]

_DEVICE_BITS = {"cpu": CPU_BIT, "cuda": CUDA_BIT, "meta": META_BIT}


# -- the empty_strided operator (Note [Factories go through BackendSelect]) --------------------------------
def empty_strided_backend_select(size: Sequence[int], stride: Sequence[int], dtype: Any = None, layout: Any = None,
                                 device: Any = None, pin_memory: Any = None) -> Any:
    bit = _DEVICE_BITS[_device(device).type]
    keys = dispatch_key(bit) & (BACKEND_SELECT_BIT - 1)
    return _empty_strided_op().redispatch(keys, size, stride, dtype, layout, device, pin_memory)


def _strided(xp: Any, size: Sequence[int], stride: Sequence[int], dt: dtypes.DType, device: object = "cpu") -> Any:
    shape = _check_size(size)
    strides = tuple(int(s) for s in stride)
    if any(s < 0 for s in strides):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and strides={list(strides)}")
    if len(strides) != len(shape):
        raise RuntimeError(f"empty_strided: mismatch in length of strides and shape: {list(shape)} and "
                           f"{list(strides)}")
    storage = storage_np(dt)  # bfloat16's bits in uint16: Note [bfloat16 on the CUDA backend] (kernels/copy.py)
    if strides == S.contiguous_strides(shape):
        return empty_array(xp, shape, storage, device)  # Note [Impossible allocation sizes] (storage.py)
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    flat = empty_array(xp, (extent,), storage, device)
    return xp.lib.stride_tricks.as_strided(flat, shape, tuple(s * dt.itemsize for s in strides))


def empty_strided_cpu(size: Sequence[int], stride: Sequence[int], dtype: Any = None, layout: Any = None,
                      device: Any = None, pin_memory: Any = None) -> Tensor:
    dt = _dtype(dtype)
    if dt.np is None:
        raise TypeError(f"{dt} is not supported on CPU by opgen (NumPy has no such type)")
    return Tensor._wrap(_strided(np, size, stride, dt), dt)


def empty_strided_cuda(size: Sequence[int], stride: Sequence[int], dtype: Any = None, layout: Any = None,
                       device: Any = None, pin_memory: Any = None) -> Tensor:
    dt = _dtype(dtype)
    dev = _device(device)
    cp = array_module(dev)
    with cp.cuda.Device(dev.index or 0):
        return Tensor._wrap(_strided(cp, size, stride, dt, f"cuda:{dev.index or 0}"), dt)


def empty_strided_meta(size: Sequence[int], stride: Sequence[int], dtype: Any = None, layout: Any = None,
                       device: Any = None, pin_memory: Any = None) -> Tensor:
    """A tensor on device 'meta': its geometry over a storage that holds nothing (Note [Meta tensors])."""
    dt = _dtype(dtype)
    shape = _check_size(size)
    strides = tuple(int(s) for s in stride)
    if len(strides) != len(shape):
        raise RuntimeError(f"empty_strided: mismatch in length of strides and shape: {list(shape)} and "
                           f"{list(strides)}")
    if any(s < 0 for s in strides):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and strides={list(strides)}")
    return fresh_tensor(meta_array(shape, strides, storage_np(dt)), dt, META, META_BIT)


_EMPTY_STRIDED: list[Any] = []


def _empty_strided_op() -> Any:
    if not _EMPTY_STRIDED:
        _EMPTY_STRIDED.append(dispatcher.find("empty_strided"))
    return _EMPTY_STRIDED[0]


# Note [Factory fast path]
# Dispatching `empty_strided` and then a fill op costs more than NumPy's allocation itself. While this
# thread's dispatch state is the default for a CPU call (no extra include or exclude key) and the CPU
# kernels of `empty_strided` and of the fill op are still the ones this package registers (nothing
# registered at run time through runtime.library replaced them), dispatching would only reach those
# kernels: a factory then builds its array with one NumPy call (`_fast_array`) and wraps it. NumPy also
# checks the sizes; whatever it refuses (a negative or non-integer size, an impossible one) goes the
# dispatched way, which says what is wrong as PyTorch does.
PLAIN_CPU = BACKEND_SELECT_BIT | CPU_BIT


def _plain_cpu(device: Any, fill: str | None, default_fill: Any = None) -> bool:
    """Whether a factory on `device` may skip dispatch (Note [Factory fast path])."""
    if device is None:
        if default_device() is not CPU:  # Note [The default device] (device.py)
            return False
    elif device is not CPU and device != "cpu":
        return False
    if dispatch_key(CPU_BIT) != PLAIN_CPU:
        return False
    table = OP_TABLES["empty_strided"]
    if table[PLAIN_CPU] is not empty_strided_backend_select or table[CPU_BIT] is not empty_strided_cpu:
        return False
    return fill is None or OP_TABLES[fill][CPU_BIT] is default_fill


def _fast_array(make: Any, size: tuple[Any, ...], dt: dtypes.DType, device: Any, fill: str | None,
                default_fill: Any) -> Any:
    """`make(shape, dtype)` (np.empty, np.zeros, np.ones) for varargs `size`, or None where the factory
    must dispatch (Note [Factory fast path])."""
    if dt.np is None or not _plain_cpu(device, fill, default_fill):
        return None
    shape = size
    if len(size) == 1 and size[0].__class__ is not int:
        shape = size[0]
        if shape.__class__ is not tuple and shape.__class__ is not list:
            return None
    try:
        return make(shape, dt.np)
    except (TypeError, ValueError, MemoryError):
        return None


def _fast_like(make: Any, t: Tensor, fill: str | None, default_fill: Any) -> Tensor | None:
    """`make(t.shape, t's dtype)` as a new CPU tensor for a `*_like` factory of a CPU tensor `t`, or None
    where the factory must dispatch (Note [Factory fast path]); `t`'s shape needs no checking."""
    if not isinstance(t, Tensor):
        raise TypeError(f"argument 'input' (position 1) must be Tensor, not {type(t).__name__}")
    dt = t._dtype
    if dt.np is None or not _plain_cpu(t._device, fill, default_fill):
        return None
    return fresh_tensor(make(t._data.shape, dt.np), dt, CPU, CPU_BIT)


def _ones(shape: Any, dtype: Any) -> Any:
    array = np.empty(shape, dtype)
    array.fill(1)  # as the fill_ kernel does (and faster than np.ones)
    return array


# -- argument helpers ----------------------------------------------------------------------------------
def _device(device: Any) -> Device:
    return default_device() if device is None else as_device(device)


def _dtype(dtype: Any) -> dtypes.DType:
    return dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)


def _check_size(size: Sequence[Any]) -> tuple[int, ...]:
    try:
        out = tuple(map(operator.index, size))
    except TypeError:
        odd = next(type(s).__name__ for s in size if not hasattr(s, "__index__"))
        raise TypeError(f"size must be a tuple of ints, but found element of type {odd}") from None
    if len(out) > MAX_DIMS:
        raise RuntimeError(f"a tensor of {len(out)} dimensions was requested: opgen tensors have at most {MAX_DIMS} "
                           "(NumPy's limit)")
    if out and min(out) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {list(out)}")
    return out


_INTS = (int, np.integer)


def _size(size: Sequence[Any]) -> tuple[int, ...]:
    """Varargs sizes: `(2, 3)`, `((2, 3),)` and `([2, 3],)` all mean [2, 3]."""
    if len(size) == 1 and not isinstance(size[0], _INTS):
        if isinstance(size[0], str | bytes) or not isinstance(size[0], Sequence | Size | Tensor):
            raise TypeError(f"size must be a tuple of ints, not {type(size[0]).__name__}")
        size = tuple(size[0])
    return _check_size(size)


def _alloc(shape: tuple[int, ...], dt: dtypes.DType, device: Any) -> Tensor:
    _ops = opcall.ops
    return _ops.empty_strided(shape, S.contiguous_strides(shape), dtype=dt, device=device)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    # The fill above bumped the version of a tensor nobody else sees yet; a new tensor starts at version 0
    # (as in PyTorch, where factories fill below the key that counts versions). No view exists yet, so
    # dropping the Storage object is safe: it is made again, lazily, with version 0.
    t._storage = None
    return t.requires_grad_() if requires_grad else t


# -- factories -----------------------------------------------------------------------------------------
def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays or tensors)."""
    if isinstance(data, Tensor):
        if data.dtype.np is None:  # bfloat16 (CUDA only): its values, exactly, in float32, on its device
            dtype = data.dtype if dtype is None else dtype
            device = data.device if device is None else device
            data = data.detach().float()
        data = data.numpy(force=True)
    elif isinstance(data, list | tuple) and any(isinstance(x, Tensor) for x in data):
        data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
    dt = dtypes.as_dtype(dtype) if dtype is not None else _infer_dtype(data)
    if dt.np is None:  # Note [bfloat16 on the CUDA backend] (kernels/copy.py): float32, rounded on the device
        if _device(device).type not in ("cuda", "meta"):  # (meta: the geometry of the CUDA backend's tensor)
            raise TypeError(f"{dt} tensors can't be built on {_device(device)} by opgen (NumPy has no such type; "
                            f"the CUDA backend has it)")
        return _finish(tensor(data, dtype=dtypes.float32, device=device).to(dt), requires_grad)
    try:
        array = np.array(data, dtype=dt.np, copy=True)
    except OverflowError as e:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow ({e})") from None
    if array.dtype == object:
        raise TypeError(f"can't build a tensor from data of type {type(data).__name__}")
    dev = _device(device)
    if dev.type != "cpu":
        array = move(array, dev)
    return _finish(Tensor._wrap(array, dt), requires_grad)


def _infer_dtype(data: Any) -> dtypes.DType:
    if isinstance(data, np.ndarray | np.generic):
        return dtypes.from_numpy(data.dtype)
    try:
        kind = np.asarray(data).dtype.kind
    except (ValueError, TypeError) as e:
        raise ValueError(f"can't build a tensor from this data: {e}") from None
    if kind == "b":
        return dtypes.bool_
    if kind in "iu":
        return dtypes.int64
    if kind == "f":
        return dtypes.get_default_dtype()
    if isinstance(data, str | bytes):
        raise TypeError(f"can't build a tensor from data of type {type(data).__name__}")
    raise RuntimeError(f"Could not infer dtype of {_odd_element(data)}")


def _odd_element(data: Any) -> str:
    """The type name of the first element of nested `data` that is not a number (as PyTorch names it)."""
    if isinstance(data, list | tuple):
        for x in data:
            if not isinstance(x, int | float | bool | complex | np.generic):
                return _odd_element(x)
    return type(data).__name__


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          memory_format: Any = None, out: Any = None) -> Tensor:
    """A tensor of the given size with uninitialized values (`empty(2, 3)` or `empty((2, 3))`); float32 unless
    `dtype`."""
    if out is not None:  # out=: the factory's result written into out (runtime/opcall.store_out)
        return opcall.store_out("empty", empty(*size, dtype=dtype or out.dtype, device=device), out)
    dt = _dtype(dtype)
    array = _fast_array(np.empty, size, dt, device, None, None)
    if array is not None:
        t = Tensor._wrap(array, dt)
        return t.requires_grad_() if requires_grad else t
    return _finish(_alloc(_size(size), dt, device), requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None) -> Tensor:
    """A tensor of shape `size` filled with `fill_value`; its dtype is inferred from the value unless `dtype`."""
    if out is not None:
        return opcall.store_out("full", full(size, fill_value, dtype=dtype or out.dtype, device=device), out)
    if dtype is None:
        dt = dtypes.result_type(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    else:
        dt = dtypes.as_dtype(dtype)
    array = None if isinstance(fill_value, Tensor) else _fast_array(np.empty, (size,), dt, device, "fill_.Scalar",
                                                                    fill_)
    if array is not None:
        array.fill(checked_fill_value(dt, fill_value))  # as the fill_ kernel does
        t = Tensor._wrap(array, dt)
        return t.requires_grad_() if requires_grad else t
    t = _alloc(_size((size,)), dt, device)
    t.fill_(fill_value)
    return _finish(t, requires_grad)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    """A tensor of the given size filled with 0 (`zeros(2, 3)` or `zeros((2, 3))`); float32 unless `dtype`."""
    if out is not None:
        return opcall.store_out("zeros", zeros(*size, dtype=dtype or out.dtype, device=device), out)
    dt = _dtype(dtype)
    array = _fast_array(np.zeros, size, dt, device, "zero_", zero_)
    if array is not None:
        t = Tensor._wrap(array, dt)
        return t.requires_grad_() if requires_grad else t
    t = _alloc(_size(size), dt, device)
    t.zero_()
    return _finish(t, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         out: Any = None) -> Tensor:
    """A tensor of the given size filled with 1 (`ones(2, 3)` or `ones((2, 3))`); float32 unless `dtype`."""
    if out is not None:
        return opcall.store_out("ones", ones(*size, dtype=dtype or out.dtype, device=device), out)
    dt = _dtype(dtype)
    array = _fast_array(_ones, size, dt, device, "fill_.Scalar", fill_)
    if array is not None:
        t = Tensor._wrap(array, dt)
        return t.requires_grad_() if requires_grad else t
    t = _alloc(_size(size), dt, device)
    t.fill_(1)
    return _finish(t, requires_grad)


# Note [Layout of *_like results]
# PyTorch's `*_like` factories default to preserve_format, as clone does: the result takes `t`'s layout
# when `t` is dense (a transposed `t` gives a transposed result), else the layout of an elementwise result
# of `t`; `memory_format=` asks for another (`opgen.contiguous_format` ...). The factories make the result
# row-major (their fast path), and `_laid_out_like` re-lays it out only when `t` is not row-major or a
# memory format is asked for (the strides from `dense_copy.clone_strides`, clone's).
def _laid_out_like(r: Tensor, t: Tensor, memory_format: Any, op: str) -> Tensor:
    a = t._data
    if memory_format is None and (a.ndim <= 1 or a.flags.c_contiguous):
        return r
    shape = tuple(a.shape)
    strides = clone_strides(op, a, memory_format)
    if strides == S.contiguous_strides(shape):
        return r
    if r._device.type == "meta":
        return empty_strided_meta(shape, strides, dtype=r._dtype)
    return Tensor._wrap(copy_with_strides(r._data, strides), r._dtype)


def _like(t: Tensor, dtype: Any, device: Any) -> tuple[tuple[int, ...], dtypes.DType, Any]:
    if not isinstance(t, Tensor):
        raise TypeError(f"argument 'input' (position 1) must be Tensor, not {type(t).__name__}")
    return t._data.shape, (t._dtype if dtype is None else dtypes.as_dtype(dtype)), \
        (t._device if device is None else device)


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of logical shape `size` whose dims are laid out in memory in the order
    `physical_layout` (outermost first): `empty_permuted((2, 3, 4), (0, 2, 1))` is contiguous in (2, 4, 3)
    and viewed back as (2, 3, 4)."""
    shape = _check_size(tuple(size))
    order = tuple(operator.index(d) for d in physical_layout)
    if sorted(order) != list(range(len(shape))):
        raise RuntimeError(f"empty_permuted(): physical_layout {list(order)} must be a permutation of the "
                           f"{len(shape)} dims of size {list(shape)}")
    physical = _alloc(tuple(shape[d] for d in order), _dtype(dtype), device)
    inverse = [0] * len(order)
    for position, d in enumerate(order):
        inverse[d] = position
    result = physical.permute(inverse) if order else physical
    return _finish(result, requires_grad)


def empty_like(t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """An uninitialized tensor with t's shape and layout (and dtype and device, unless given)."""
    r = _fast_like(np.empty, t, None, None) if dtype is None and device is None else None
    if r is None:
        shape, dt, dev = _like(t, dtype, device)
        r = empty(shape, dtype=dt, device=dev)
    r = _laid_out_like(r, t, memory_format, "empty_like")
    return r.requires_grad_() if requires_grad else r


def zeros_like(t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """A tensor of zeros with t's shape and layout (and dtype and device, unless given)."""
    r = _fast_like(np.zeros, t, "zero_", zero_) if dtype is None and device is None else None
    if r is None:
        shape, dt, dev = _like(t, dtype, device)
        r = zeros(shape, dtype=dt, device=dev)
    r = _laid_out_like(r, t, memory_format, "zeros_like")
    return r.requires_grad_() if requires_grad else r


def ones_like(t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """A tensor of ones with t's shape and layout (and dtype and device, unless given)."""
    r = _fast_like(_ones, t, "fill_.Scalar", fill_) if dtype is None and device is None else None
    if r is None:
        shape, dt, dev = _like(t, dtype, device)
        r = ones(shape, dtype=dt, device=dev)
    r = _laid_out_like(r, t, memory_format, "ones_like")
    return r.requires_grad_() if requires_grad else r


def full_like(t: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor filled with `fill_value` with t's shape and layout (and dtype and device, unless given)."""
    shape, dt, dev = _like(t, dtype, device)
    r = _laid_out_like(full(shape, fill_value, dtype=dt, device=dev), t, memory_format, "full_like")
    return r.requires_grad_() if requires_grad else r


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False, out: Any = None) -> Tensor:
    """An n x m (m defaults to n) tensor with ones on the diagonal and zeros elsewhere."""
    if out is not None:
        return opcall.store_out("eye", eye(n, m, dtype=dtype or out.dtype, device=device), out)
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"n and m must be non-negative, got n={n}, m={m}")
    t = zeros(n, m, dtype=dtype, device=device)
    if t._device.type == "meta":  # no values to compute
        return _finish(t, requires_grad)
    store(t, array_module(t.device).eye(n, m, dtype=np.float32 if t._dtype.np is None else t._dtype.np))
    return _finish(t, requires_grad)


def rand(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform on [0, 1)."""
    t = _alloc(_size(size), _dtype(dtype), device)
    t.uniform_(0.0, 1.0, generator=generator)
    return _finish(t, requires_grad)


def randn(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, out: Any = None) -> Tensor:
    """Standard normal."""
    if out is not None:
        return opcall.store_out("randn", randn(*size, generator=generator, dtype=dtype or out.dtype, device=device),
                                out)
    t = _alloc(_size(size), _dtype(dtype), device)
    t.normal_(0.0, 1.0, generator=generator)
    return _finish(t, requires_grad)


def randint(*args: Any, size: Any = None, generator: Any = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """`randint(high, size)` or `randint(low, high, size)`: integers uniform in [low, high); int64 by default."""
    if size is not None:
        args = (*args, size)
    if len(args) == 2:
        low, (high, shape) = 0, args
    elif len(args) == 3:
        low, high, shape = args
    else:
        raise TypeError("randint() expects (high, size) or (low, high, size)")
    t = _alloc(_size((shape,)), dtypes.int64 if dtype is None else dtypes.as_dtype(dtype), device)
    t.random_(int(low), int(high), generator=generator)
    return _finish(t, requires_grad)


def rand_like(t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
              generator: Any = None, memory_format: Any = None) -> Tensor:
    """Uniform values on [0, 1) with t's shape (and dtype and device, unless given)."""
    shape, dt, dev = _like(t, dtype, device)
    r = _laid_out_like(rand(shape, generator=generator, dtype=dt, device=dev), t, memory_format, "rand_like")
    return r.requires_grad_() if requires_grad else r


def randn_like(t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               generator: Any = None, memory_format: Any = None) -> Tensor:
    """Standard normal values with t's shape (and dtype and device, unless given)."""
    shape, dt, dev = _like(t, dtype, device)
    r = _laid_out_like(randn(shape, generator=generator, dtype=dt, device=dev), t, memory_format, "randn_like")
    return r.requires_grad_() if requires_grad else r


def randint_like(t: Tensor, low: int, high: int | None = None, *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False, generator: Any = None, memory_format: Any = None) -> Tensor:
    """Random integers in [low, high) (in [0, low) when high is not given) with t's shape (and dtype and device, unless
    given)."""
    if high is None:
        low, high = 0, low
    shape, dt, dev = _like(t, dtype, device)
    r = _laid_out_like(randint(low, high, shape, generator=generator, dtype=dt, device=dev), t, memory_format,
                       "randint_like")
    return r.requires_grad_() if requires_grad else r


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with a NumPy array."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not supported: make a copy of the array first (array.copy())")
    if any(s % array.itemsize for s in array.strides):
        raise ValueError("given numpy array strides are not a multiple of the element byte size: copy the "
                         "array first (np.ascontiguousarray)")
    if array.__class__ is not np.ndarray:
        # a subclass (np.memmap, np.matrix): a plain view of the same memory, since the tensor core tells
        # NumPy arrays from CuPy ones by exact class
        array = array.view(np.ndarray)
    return Tensor._wrap(array, dtypes.from_numpy(array.dtype))


# The Python numbers an op takes for a Tensor `self` (Note [A Python number as self] in codegen/render/ops.py)
PYTHON_NUMBERS = (bool, int, float)


def scalar_tensor(value: Any, like: Tensor | None = None, *, op: str = "", arg: str = "",
                  dispatch: bool = False) -> Tensor:
    """A 0-d "wrapped number" tensor: it promotes like a Python scalar and takes no part in dispatch, unless
    `dispatch` (a number taken as an op's `self`, Note [A Python number as self] in codegen/render/ops.py:
    a CPU tensor, so that the formulas of the op's gradient can compute with it).

    `op` and `arg` name the call a Python number was passed to, for the error when `value` is not one.
    """
    if not isinstance(value, bool | int | float) and not isinstance(value, np.number | np.bool_):
        where = f"{op}(): argument '{arg}' " if op else ""
        raise TypeError(f"{where}must be Tensor or a number, not {type(value).__name__}")
    dt = dtypes.result_type(value)
    t = Tensor._wrap(np.array(value, dtype=dt.np), dt)
    t._wrapped = True
    t._keys = CPU_BIT if dispatch else 0
    return t


def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0..n-1 (int64 by default): the order that sorts n uniform draws of `generator`."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    _ops = opcall.ops
    keys = rand(n, generator=generator, dtype=dtypes.float64, device=device)
    perm = _ops.argsort(keys)
    return _finish(perm.to(_dtype(dtype) if dtype is not None else dtypes.int64), requires_grad)


# -- Tensor methods that build tensors (Note [Tensor methods from upper layers] in runtime/tensor.py) -----
def _legacy_init(self: Tensor, *args: Any, device: Any = None) -> None:
    """PyTorch's legacy constructor, as old tutorials use it: `Tensor(2, 3)` or `Tensor(Size)` (uninitialised,
    the default dtype), `Tensor([[1, 2]])` (data in the default dtype), `Tensor()` (empty). Kernels never
    come here (Note [Lean tensor construction])."""
    if len(args) == 1 and isinstance(args[0], Tensor):
        raise TypeError("Tensor(tensor) aliasing is not supported by opgen; use tensor.detach() or .clone()")
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        src = empty(*args, device=device) if args else empty(0, device=device)
    elif len(args) == 1 and isinstance(args[0], Size):
        src = empty(*args[0], device=device)
    elif len(args) == 1 and not isinstance(args[0], str | bytes | float | complex | bool):
        src = tensor(args[0], dtype=dtypes.get_default_dtype(), device=device)
    else:
        raise TypeError("Tensor(): expected sizes (ints), a Size, or one sequence of data; got "
                        f"({', '.join(type(a).__name__ for a in args)})")
    for name in Tensor.__slots__:  # every slot fresh_tensor sets (Note [Lean tensor construction])
        if name not in ("__dict__", "__weakref__"):
            setattr(self, name, getattr(src, name))
    self.__dict__.update(src.__dict__)


def _new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """A new tensor of `data` (copied, detached) with this tensor's dtype and device unless given."""
    if isinstance(data, Tensor):
        data = data.detach().clone()
        return data.to(dtype=dtype or self._dtype, device=device or self._device).requires_grad_(requires_grad)
    return tensor(data, dtype=dtype or self._dtype, device=device or self._device, requires_grad=requires_grad)


install_methods(__init__=_legacy_init, new_tensor=_new_tensor)

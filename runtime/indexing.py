"""`Tensor.__getitem__` and `__setitem__`: index expressions as a chain of view ops, then `index`.

Note [Indexing composes ops]
`t[key]` is split, as PyTorch's applySlicing does, into basic indexing, done with view ops (select for
an int, slice for a slice, unsqueeze for None, Ellipsis skips dims), and advanced indexing (tensors,
lists, bool masks), done by one `index` op over the view with one entry per dim. Every step is a
dispatched op, so autograd records it and the result of basic indexing shares storage with `t`.
`t[key] = v` takes the same view, then `copy_` (basic) or `index_put_` (advanced) writes into it.
The common keys (ints, slices with int bounds, None, one Ellipsis) skip the normalisation: `_basic`
applies their view ops directly, and an int alone is one `select`; one index tensor or mask that is not
0-d and uses up no more dims than the tensor has is the whole advanced index of `index`/`index_put_`.

Note [Indexing without the op functions]
`t[None]`, `t[..., i]` and `t[idx]` call their op's dispatch table (`dispatcher.OP_TABLES`) themselves, as
the generated op function would (Note [Direct method calls] in templates/methods.py.j2): the same kernels,
autograd and fallbacks, one frame less. `t[idx] = number` on the CPU, while dispatching `index_put_` would
only reach this package's own kernel (the rule of Note [Factory fast path] in runtime/factories.py: a CPU
call in the default dispatch state, that kernel not replaced at run time), bumps the version as the op
function does and stores the number with `put_scalar`, without making a 0-d tensor of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes, opcall
from runtime.dispatcher import OP_TABLES, dispatch_key
from runtime.factories import PLAIN_CPU
from runtime.kernels import index as index_kernels
from runtime.tensor import Tensor, install_methods


def _as_index_tensor(value: Any, device: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    array = np.asarray(value)
    if array.dtype.kind not in "biu":
        if array.size == 0:
            array = array.astype(np.int64)
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if array.dtype.kind in "iu" and array.dtype != np.uint8:
        array = array.astype(np.int64)
    return Tensor._wrap(array, dtypes.from_numpy(array.dtype))


def _consumed(item: Any) -> int:
    """How many dims of the indexed tensor one index item uses up."""
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, Tensor | np.ndarray):
        return item.ndim if item.dtype in (dtypes.bool_, dtypes.uint8, np.bool_, np.uint8) else 1
    return 1


def _split(t: Tensor, key: Any) -> tuple[Tensor, list[Tensor | None] | None]:
    """Apply the basic part of `key` as views; return the view and the advanced indices (or None)."""
    if not isinstance(key, tuple):
        key = (key,)
    ops = opcall.ops
    ndim = t.dim()
    key = tuple(_as_index_tensor(k, t.device) if isinstance(k, list | np.ndarray) else k for k in key)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumed(k) for k in key)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = t
    dim = 0
    advanced: list[Tensor | None] = []
    has_advanced = False
    for item in key:
        if item is Ellipsis:
            skip = ndim - used
            dim += skip
            advanced.extend([None] * skip)
        elif item is None:
            result = ops.unsqueeze(result, dim)
            dim += 1
            advanced.append(None)
        elif isinstance(item, bool):
            result = ops.unsqueeze(result, dim)
            if not item:
                result = ops.slice(result, dim, 0, 0, 1)
            dim += 1
            advanced.append(None)
        elif isinstance(item, slice):
            step = 1 if item.step is None else _as_int(item.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = None if item.start is None else _as_int(item.start)
            stop = None if item.stop is None else _as_int(item.stop)
            if not (start is None and stop is None and step == 1):
                result = ops.slice(result, dim, start, stop, step)
            dim += 1
            advanced.append(None)
        elif isinstance(item, Tensor):
            if item.ndim == 0 and item.dtype is dtypes.bool_:  # a new dim of size 1 (True) or 0 (False)
                result = ops.unsqueeze(result, dim)
                if not bool(item):
                    result = ops.slice(result, dim, 0, 0, 1)
                dim += 1
                advanced.append(None)
                continue
            has_advanced = True
            advanced.append(item)
            n = _consumed(item)
            dim += n  # a k-dim mask is one entry of `advanced` covering k dims
        else:
            index = _as_int(item)
            result = ops.select(result, dim, index)
    if not has_advanced:
        return result, None
    while advanced and advanced[-1] is None:
        advanced.pop()
    return result, advanced


def _as_int(value: Any) -> int:
    try:
        return value.__index__()
    except (AttributeError, TypeError):
        if isinstance(value, str | bytes):
            raise TypeError(f"a tensor cannot be indexed by a string ({value!r})") from None
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte tensors are "
                         f"valid indices (got {type(value).__name__})") from None


_py_slice = slice


def _basic(t: Tensor, key: Any) -> Tensor | None:
    """`t[key]` for the common keys made of ints, slices with int bounds, None and one Ellipsis, with one
    view op per item and no normalisation (Note [Indexing composes ops]); None for anything else."""
    ndim = t._data.ndim
    cls = key.__class__
    if cls is int:
        return opcall.ops.select(t, 0, key) if ndim else None
    if cls is not tuple:
        key = (key,)
    used = 0
    ellipsis = False
    for item in key:
        c = item.__class__
        if c is int:
            used += 1
        elif c is _py_slice:
            start, stop, step = item.start, item.stop, item.step
            if not ((start is None or start.__class__ is int) and (stop is None or stop.__class__ is int)
                    and (step is None or (step.__class__ is int and step > 0))):
                return None
            used += 1
        elif item is Ellipsis:
            if ellipsis:
                return None
            ellipsis = True
        elif item is not None:
            return None
    if used > ndim:
        return None
    ops = opcall.ops
    result = t
    dim = 0
    for item in key:
        c = item.__class__
        if c is int:
            result = ops.select(result, dim, item)
        elif c is _py_slice:
            step = 1 if item.step is None else item.step
            if not (item.start is None and item.stop is None and step == 1):
                result = ops.slice(result, dim, item.start, item.stop, step)
            dim += 1
        elif item is None:
            result = ops.unsqueeze(result, dim)
            dim += 1
        else:
            dim += ndim - used
    return result


def _one_tensor(t: Tensor, key: Any) -> bool:
    """Whether `key` is one index tensor (or mask) that `_split` would pass on whole as the only advanced
    index: not 0-d (a 0-d bool adds a dim), and not using up more dims than `t` has (an error there)."""
    return key.__class__ is Tensor and 0 < key._data.ndim <= t._data.ndim


def getitem(t: Tensor, key: Any) -> Tensor:
    cls = key.__class__
    if key is None:  # Note [Indexing without the op functions]
        return OP_TABLES["unsqueeze"][dispatch_key(t._keys)](t, 0)
    ndim = t._data.ndim
    if ndim:
        if cls is int:
            return opcall.ops.select(t, 0, key)
        if cls is _py_slice and key.step is None and key.start.__class__ is int and key.stop.__class__ is int:
            return opcall.ops.slice(t, 0, key.start, key.stop, 1)
        if cls is Tensor and _one_tensor(t, key):
            return OP_TABLES["index.Tensor"][dispatch_key(t._keys | key._keys)](t, [key])
        if cls is tuple and len(key) == 2 and key[0] is Ellipsis and key[1].__class__ is int:  # t[..., i]
            return OP_TABLES["select.int"][dispatch_key(t._keys)](t, ndim - 1, key[1])
    if cls is not bool:
        view = _basic(t, key)
        if view is not None:
            return view
    if t.dim() == 0 and key is not None and key is not Ellipsis and not isinstance(key, tuple | bool | Tensor):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                         "in C++ to convert a 0-dim tensor to a number")
    view, advanced = _split(t, key)
    if advanced is None:
        return view
    return opcall.ops.index(view, advanced)


def _strip_leading_ones(src: Tensor) -> Tensor:
    """`src` without its leading size-1 dims, as PyTorch assigns: `a[0] = ones(1, 4)` on a (3, 4) tensor
    writes the row (the value broadcasts to the target afterwards, so nothing else changes)."""
    shape = src.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return opcall.ops.reshape(src, tuple(shape[k:])) if k else src


def _numeric_array(t: Tensor, value: Any) -> np.ndarray:
    """`value` (a NumPy number or array, or nested lists of numbers) as an array; TypeError for anything
    else, as PyTorch refuses a str or an object."""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        array = None
    if array is None or array.dtype.kind not in "biuf":
        raise TypeError(f"can't assign a {type(value).__name__} to a "
                        f"{dtypes.tensor_type_name(t.dtype, t.device.type)}")
    if array.dtype not in _ASSIGNABLE:  # uint16/32/64, long double: through the widest type opgen has
        array = array.astype(np.float64 if array.dtype.kind == "f" else np.int64)
    return array


_ASSIGNABLE = {np.dtype(d) for d in (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
                                     np.float32, np.float64)}


def setitem(t: Tensor, key: Any, value: Any) -> None:
    if key.__class__ is Tensor and _one_tensor(t, key):
        number = value.__class__
        if ((number is float or number is int or number is bool)  # Note [Indexing without the op functions]
                and dispatch_key(t._keys | key._keys) == PLAIN_CPU
                and OP_TABLES["index_put_"][PLAIN_CPU] is index_kernels.index_put_):
            t._bump_version()
            index_kernels.put_scalar(t, key, value)
            return
        view, advanced = t, [key]
    elif key is None:
        view, advanced = opcall.ops.unsqueeze(t, 0), None
    else:
        view = _basic(t, key) if key.__class__ is not bool else None
        if view is not None:
            advanced = None
        else:
            view, advanced = _split(t, key)
    ops = opcall.ops
    if isinstance(value, Tensor):
        # cast where `t` lives: a CPU value for a bfloat16 CUDA `t` cannot be bfloat16 on the CPU
        src = value if value.dtype is t.dtype else value.to(dtype=t.dtype, device=t.device)
    elif isinstance(value, bool | int | float):
        src = None
    else:
        src = ops._to_copy(Tensor._wrap(_numeric_array(t, value)), dtype=t.dtype, device=t.device)
    if src is not None:
        src = _strip_leading_ones(src)
    if advanced is None:
        if src is None:
            view.fill_(value)
        else:
            view.copy_(src)
        return
    if src is None:
        src = Tensor._wrap(np.asarray(value, dtype=t._dtype.np))
        if t._device.type != "cpu":
            src = ops._to_copy(src, device=t.device)
    elif src.device != t.device:
        src = src.to(t.device)
    ops.index_put_(view, advanced, src)


# Note [Tensor methods from upper layers] (runtime/tensor.py)
install_methods(__getitem__=getitem, __setitem__=setitem)
